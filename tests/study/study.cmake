# Studies over many runs (sim/study): sweeps, reports and the SLO search.

# Sweeps (`kvstrata sweep`): the points a sweep file names, running them as
# processes two at a time, resuming after damage, failures, the Slurm script
# and --merge. Each point is the closed-form scenario: a fraction of a second.

ks_cli_test(sweep_help --stdout-has "Usage: kvstrata sweep SWEEP.lua" --stdout-has "--emit none|slurm"
            --stdout-has "--merge DIR" --stdout-has "axes" --stdout-has "seeds" --stderr-empty -- sweep --help)
ks_cli_test(sweep_no_file --exit 2 --stdout-empty --stderr-has "missing SWEEP.lua" -- sweep)
ks_cli_test(sweep_bad_jobs --exit 2 --stdout-empty --stderr-has "--jobs" -- sweep x.lua -j 0)
ks_cli_test(sweep_merge_and_file --exit 2 --stdout-empty --stderr-has "--merge" -- sweep x.lua --merge dir)
ks_cli_test(sweep_dry_emit --exit 2 --stdout-empty --stderr-has "--dry-run"
            -- sweep ${PROJECT_SOURCE_DIR}/scenarios/sweeps/l1_share.lua --dry-run --emit slurm)
ks_cli_test(sweep_missing_file --exit 2 --stdout-empty --stderr-has "nowhere.lua" -- sweep nowhere.lua)
# the shipped example: three valid points, planned without running
ks_cli_test(sweep_l1_share_plan --json --stderr-empty --is name l1_share --ge points 3 --le points 3 --has plan
            -- sweep ${PROJECT_SOURCE_DIR}/scenarios/sweeps/l1_share.lua --dry-run --json)

foreach(t points resume slurm)
  add_test(NAME sweep_${t} COMMAND ${CMAKE_CURRENT_LIST_DIR}/sweep_${t}.sh $<TARGET_FILE:kvstrata> ${PROJECT_SOURCE_DIR})
  set_tests_properties(sweep_${t} PROPERTIES TIMEOUT 300)
endforeach()

# kvstrata report: a rendered report whose images all exist and are valid
# (skipped without gnuplot); bad inputs refused.
add_test(NAME report_renders COMMAND ${CMAKE_CURRENT_LIST_DIR}/report_check.sh $<TARGET_FILE:kvstrata>
         run ${PROJECT_SOURCE_DIR}/scenarios/default.lua --set duration=5s --set workload.arrival.rate=40
         --set cache.l1=20GB --set prefill.mode=disaggregated --set prefill.gpus=64)
set_tests_properties(report_renders PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# a sweep's report: 6 metrics x 2 axes + the frontier, PNG and SVG each = 26 images
add_test(NAME report_sweep_renders COMMAND ${CMAKE_CURRENT_LIST_DIR}/report_check.sh $<TARGET_FILE:kvstrata>
         sweep ${ks_ts}/sweep_report.lua 26)
set_tests_properties(report_sweep_renders PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
ks_cli_test(report_needs_output --exit 2 --stdout-empty --stderr-has "-o DIR" -- report x.h5)
ks_cli_test(report_not_a_result --exit 1 --stdout-empty --stderr-has "synthetic_drifting_8k.h5: /requests is missing"
            -- report ${PROJECT_SOURCE_DIR}/results/traces/synthetic_drifting_8k.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
ks_cli_test(report_not_hdf5 --exit 1 --stdout-empty --stderr-has "cannot be opened as an HDF5 file"
            -- report ${CMAKE_CURRENT_LIST_DIR}/study.cmake -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)

# plan: bisection for the smallest HBM bandwidth with P99 TPOT <= 1 ms: at
# least 536.870912 GB/s (the closed form), within the 2% tolerance above it
ks_cli_test(plan_closed_form --json --ge answer 5.36870912e11 --le answer 5.476e11 --has points --is goal smallest
            -- plan ${ks_ts}/plan_hbm.lua -o ${CMAKE_CURRENT_BINARY_DIR}/plan_hbm --json)
ks_cli_test(plan_bad --exit 2 --stdout-empty --stderr-has "search" -- plan ${ks_ts}/closed_form.lua)
