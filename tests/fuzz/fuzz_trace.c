// fuzz_trace.c - libFuzzer target: the trace reader (ks_trace_load), as
// `kvstrata trace stats`, `trace model` and trace replay call it. The input
// is the HDF5 file, written to a .h5 file; a trace that loads is walked
// record by record as replay looks it up (ks_trace_at).
#include "fuzz_util.h"

#include <hdf5.h>
#include <math.h>

#include "trace.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); // HDF5's error stacks would flood the log
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[4200], err[4096];
    fuzz_write(data, size, ".h5", path, sizeof path);
    struct ks_trace *t = ks_trace_load(path, err, sizeof err);
    unlink(path);
    if (!t)
        return 0;
    // the invariants trace.h promises of a loaded trace: a broken one is a
    // crash here, so a reader that lets bad data through is found too
    for (size_t i = 0; i < t->n_steps; i++) {
        const struct ks_trace_step *st = &t->steps[i];
        if (ks_trace_at(t, st->request, st->step, st->layer) != st || st->first > t->n_sel ||
            st->n > t->n_sel - st->first)
            abort();
        for (uint32_t k = 0; k < st->n; k++) {
            const struct ks_trace_sel *x = &t->sel[st->first + k];
            if (x->block >= ks_trace_blocks(&t->meta, st->context) || !(x->mass >= 0 && isfinite(x->mass)))
                abort();
        }
    }
    ks_trace_free(t);
    return 0;
}
