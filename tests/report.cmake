# kvstrata report: a rendered report whose images all exist and are valid
# (skipped without gnuplot); bad inputs refused.
add_test(NAME report_renders COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/report_check.sh $<TARGET_FILE:kvstrata>
         run ${PROJECT_SOURCE_DIR}/scenarios/default.lua --set duration=5s --set workload.arrival.rate=40
         --set cache.l1=20GB --set prefill.mode=disaggregated --set prefill.gpus=64)
set_tests_properties(report_renders PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# a sweep's report: 6 metrics x 2 axes + the frontier, PNG and SVG each = 26 images
add_test(NAME report_sweep_renders COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/report_check.sh $<TARGET_FILE:kvstrata>
         sweep ${PROJECT_SOURCE_DIR}/tests/scenarios/sweep_report.lua 26)
set_tests_properties(report_sweep_renders PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
ks_cli_test(report_needs_output --exit 2 --stdout-empty --stderr-has "-o DIR" -- report x.h5)
ks_cli_test(report_not_a_result --exit 1 --stdout-empty --stderr-has "synthetic_drifting_8k.h5: /requests is missing"
            -- report ${PROJECT_SOURCE_DIR}/results/traces/synthetic_drifting_8k.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
ks_cli_test(report_not_hdf5 --exit 1 --stdout-empty --stderr-has "cannot be opened as an HDF5 file"
            -- report ${CMAKE_CURRENT_SOURCE_DIR}/report.cmake -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
