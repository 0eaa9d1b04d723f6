// fuzz_result.c - libFuzzer target: the result reader of `kvstrata report`
// (ks_report_write: sim/study/report.c through sim/results/h5read.c). The
// input is the HDF5 file, written to a .h5 file. A result that reads goes on
// to the report's data files, scripts and index.html in the process's
// folder, with `true` standing in for gnuplot: every table and value the
// plots index with or divide by is exercised, and nothing is rendered.
#include "fuzz_util.h"

#include <hdf5.h>

#include "report.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); // HDF5's error stacks would flood the log
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[4200], out[4200], err[4096];
    fuzz_write(data, size, ".h5", path, sizeof path);
    snprintf(out, sizeof out, "%s/report", fuzz_folder());
    ks_report_write(path, out, "true", err, sizeof err);
    unlink(path);
    return 0;
}
