// fixed_time.c - time() that always answers 0 (the epoch), preloaded
// (LD_PRELOAD) into the fuzz targets by `tests/fuzz/run.sh --runs` so that
// a run repeats: Lua 5.4 seeds each state's string hash from time(NULL) and
// three addresses (luai_makeseed, lstate.c), and the order in which the
// scenario loader walks a table (lua_next) follows that hash. run.sh also
// turns address randomisation off (setarch -R) where the system lets it;
// with both, the seed is the same on every run. Nothing the targets test
// reads the clock through time(); libFuzzer's timers use clock_gettime.
#include <time.h>

time_t time(time_t *t)
{
    if (t)
        *t = 0;
    return 0;
}
