// test_threads.c - the run's default thread count (README "kvstrata run":
// "--threads N (default: the online CPUs, at most 4)").
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <unistd.h>

#include "engine.h"

static void default_is_online_cpus_at_most_4(void **state)
{
    (void)state;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    assert_true(online >= 1);
    unsigned want = online < 4 ? (unsigned)online : 4;
    assert_int_equal(ks_engine_threads_default(), want);
    assert_int_equal(KS_ENGINE_THREADS, 4); // the cap, on a machine of fewer CPUs too
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_is_online_cpus_at_most_4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
