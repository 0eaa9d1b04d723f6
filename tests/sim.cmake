# Simulator support modules: histograms, HDF5 result files, the SimGrid platform.
ks_add_test(sim_hist test_hist.c)
target_link_libraries(sim_hist PRIVATE ks_sim)
ks_add_test(sim_results test_results.c)
target_link_libraries(sim_results PRIVATE ks_sim)
ks_add_test(sim_platform test_platform.c)
target_link_libraries(sim_platform PRIVATE ks_sim)
ks_add_test(sim_select test_select.c)
target_link_libraries(sim_select PRIVATE ks_sim)
