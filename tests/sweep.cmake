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
  add_test(NAME sweep_${t} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/sweep_${t}.sh $<TARGET_FILE:kvstrata> ${PROJECT_SOURCE_DIR})
  set_tests_properties(sweep_${t} PROPERTIES TIMEOUT 300)
endforeach()
