# HDF5 result files (sim/results): what is written reads back; nothing half-written.
ks_add_test(results.results test_results.c)
target_link_libraries(results_results PRIVATE ks_results)
