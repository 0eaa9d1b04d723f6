# HDF5 result files (sim/results): what is written reads back; nothing half-written.
ks_add_test(results.results test_results.c)
target_link_libraries(results_results PRIVATE ks_results)
# a full file system (a file-size limit; a 16 KiB tmpfs where mount is permitted): a clear
# error, exit 1, nothing left behind, no crash in HDF5's exit handler (issue 16, class 4)
add_test(NAME results_io_full COMMAND ${CMAKE_CURRENT_LIST_DIR}/io_full.sh $<TARGET_FILE:kvstrata>
         ${ks_pol})
set_tests_properties(results_io_full PROPERTIES TIMEOUT 300)
# README "kvstrata run": the time series of a run of workload.requests "start at a resolution of
# 1 ms and 10 ms and halve it each time the run outlives it" (series_resolution.sh). One request
# on closed_form.lua, decode steps of 0.27-0.40 ms: 2000 tokens end at 0.672 s, inside the first
# 1 s horizon (/steps every 1 ms, /link_samples every 10 ms); 4000 tokens end at 1.602 s, past it
# once (2 ms and 20 ms).
add_test(NAME results_series_first_resolution COMMAND ${CMAKE_CURRENT_LIST_DIR}/series_resolution.sh
         $<TARGET_FILE:kvstrata> 0.001 0.01 ${ks_ts}/closed_form.lua --set workload.output_tokens=2000)
add_test(NAME results_series_halved COMMAND ${CMAKE_CURRENT_LIST_DIR}/series_resolution.sh
         $<TARGET_FILE:kvstrata> 0.002 0.02 ${ks_ts}/closed_form.lua --set workload.output_tokens=4000)
set_tests_properties(results_series_first_resolution results_series_halved PROPERTIES TIMEOUT 300)
