# HDF5 result files (sim/results): what is written reads back; nothing half-written.
ks_add_test(results.results test_results.c)
target_link_libraries(results_results PRIVATE ks_results)
# a full file system (a file-size limit; a 16 KiB tmpfs where mount is permitted): a clear
# error, exit 1, nothing left behind, no crash in HDF5's exit handler (issue 16, class 4)
add_test(NAME results_io_full COMMAND ${CMAKE_CURRENT_LIST_DIR}/io_full.sh $<TARGET_FILE:kvstrata>
         ${ks_pol})
set_tests_properties(results_io_full PROPERTIES TIMEOUT 300)
