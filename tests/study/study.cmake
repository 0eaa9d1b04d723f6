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

# A point's result counts only when its writer finished (issue 16)
ks_add_test(study.sweep_merge test_sweep_merge.c)
target_link_libraries(study_sweep_merge PRIVATE ks_study)

# sweep_hostile: seeds beyond 2^53, a base edited between runs, a second sweep
# into a locked folder, a point with no measurement (issue 16)
foreach(t points resume slurm hostile)
  add_test(NAME sweep_${t} COMMAND ${CMAKE_CURRENT_LIST_DIR}/sweep_${t}.sh $<TARGET_FILE:kvstrata> ${PROJECT_SOURCE_DIR})
  set_tests_properties(sweep_${t} PROPERTIES TIMEOUT 300)
endforeach()

# What a report says about a summary (issue 20): every key ks_run_summarise
# makes has a group and a unit, the rule for what bounded a run, the headline
# and the verdicts, the notes in the file
ks_add_test(study.runfile test_runfile.c)
target_link_libraries(study_runfile PRIVATE ks_study)

# kvstrata report: a rendered report whose images all exist and are valid
# (skipped without gnuplot); bad inputs refused.
add_test(NAME report_renders COMMAND ${CMAKE_CURRENT_LIST_DIR}/report_check.sh $<TARGET_FILE:kvstrata>
         run ${PROJECT_SOURCE_DIR}/tests/fixtures/scenarios/seed_default.lua --set duration=5s --set workload.arrival.rate=40
         --set cache.l1=20GB --set prefill.mode=disaggregated --set prefill.gpus=64)
set_tests_properties(report_renders PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# README `report`: "tier occupancy (over simulated time, in 100 intervals) and the utilisation of
# the six busiest links" (report_series.sh): occupancy.dat's rows sit at the middles of 100
# intervals of the run (88 of them hold steps: decode starts 0.6 s in), links.gp draws the 6 of
# the 16 links that carried bytes with the most bytes; and all 5 where only 5 carried any (one
# request on closed_form.lua whose 8-block window misses an L1 of 256 MiB: 42 ms, 37 intervals).
add_test(NAME report_series_busiest COMMAND ${CMAKE_CURRENT_LIST_DIR}/report_series.sh $<TARGET_FILE:kvstrata> 88
         ${PROJECT_SOURCE_DIR}/tests/fixtures/scenarios/seed_default.lua --set duration=5s --set workload.arrival.rate=40
         --set cache.l1=20GB --set prefill.mode=disaggregated --set prefill.gpus=64)
add_test(NAME report_series_few_links COMMAND ${CMAKE_CURRENT_LIST_DIR}/report_series.sh $<TARGET_FILE:kvstrata> 37
         ${ks_ts}/closed_form.lua --set cache.l1=256MiB --set sparse.policy=window --set sparse.window_blocks=8
         --set sparse.sink_blocks=0 --set sparse.budget_tokens=0 --set workload.output_tokens=2000)
set_tests_properties(report_series_busiest report_series_few_links PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# a sweep's report: 7 metrics x 2 axes + the frontier, PNG and SVG each = 30 images
add_test(NAME report_sweep_renders COMMAND ${CMAKE_CURRENT_LIST_DIR}/report_check.sh $<TARGET_FILE:kvstrata>
         sweep ${ks_ts}/sweep_report.lua 30)
set_tests_properties(report_sweep_renders PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# what the report says: headline, units, notes, scenario; two runs compared; an old
# result; bad input refused without a folder (issue 20)
add_test(NAME report_summary COMMAND ${CMAKE_CURRENT_LIST_DIR}/report_summary.sh $<TARGET_FILE:kvstrata>
         ${PROJECT_SOURCE_DIR})
set_tests_properties(report_summary PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
ks_cli_test(report_help --stdout-has "Usage: kvstrata report RESULT.h5 [RESULT.h5 ...] | SWEEP_DIR"
            --stdout-has "compares them with the first" --stderr-empty -- report --help)
ks_cli_test(report_too_many --exit 2 --stdout-empty --stderr-has "a report compares at most 8"
            -- report 1.h5 2.h5 3.h5 4.h5 5.h5 6.h5 7.h5 8.h5 9.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
ks_cli_test(report_needs_output --exit 2 --stdout-empty --stderr-has "-o DIR" -- report x.h5)
ks_cli_test(report_not_a_result --exit 1 --stdout-empty
            --stderr-has "synthetic_drifting_8k.h5: /steps has no field 't' (is it a result file of this kvstrata version?)"
            -- report ${PROJECT_SOURCE_DIR}/results/traces/synthetic_drifting_8k.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
ks_cli_test(report_not_hdf5 --exit 1 --stdout-empty --stderr-has "cannot be opened as an HDF5 file"
            -- report ${CMAKE_CURRENT_LIST_DIR}/study.cmake -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)

# plan: bisection for the smallest HBM bandwidth with P99 TPOT <= 1 ms (one request of two tokens: its one
# gap): at least 536.870912 GB/s (the closed form), within the 2% tolerance above it
ks_cli_test(plan_closed_form --json --ge answer 5.36870912e11 --le answer 5.476e11 --ge margin 0 --le margin 0.02 --has points --is goal smallest
            -- plan ${ks_ts}/plan_hbm.lua -o ${CMAKE_CURRENT_BINARY_DIR}/plan_hbm --json)
# README "SLO search": the shipped plan's answer, the largest rate (requests/s) one node serves with
# P99 ITL <= 50 ms and P99 TTFT <= 1 s, in 9 points (README said 449 until 2026-12-02: the figure
# had drifted with the fused scheduler and the HBM capacity as CUDA reports it); README "(9 points, 22 s":
# the search simulates exactly 9 points (--len points 9)
ks_cli_test(plan_readme_rate --json --ge answer 412 --le answer 412 --eq found true --is goal largest --ge margin 0
            --len points 9
            -- plan ${PROJECT_SOURCE_DIR}/scenarios/plans/short_context_rate.lua
            -o ${CMAKE_CURRENT_BINARY_DIR}/plan_readme --json)
ks_cli_test(plan_bad --exit 2 --stdout-empty --stderr-has "search" -- plan ${ks_ts}/closed_form.lua)
# a scenario given where a plan is asked for: said so, not a Lua error (the plan loads require "kvstrata" too)
ks_cli_test(plan_given_scenario --exit 2 --stdout-empty --stderr-has "default.lua: is a scenario, not a plan"
            -- plan ${PROJECT_SOURCE_DIR}/scenarios/default.lua)
ks_cli_test(sweep_given_scenario --exit 2 --stdout-empty --stderr-has "default.lua: is a scenario, not a sweep"
            -- sweep ${PROJECT_SOURCE_DIR}/scenarios/default.lua -o ${CMAKE_CURRENT_BINARY_DIR}/sweep_given_scenario)
# and a plan or a sweep given for a scenario: one error naming the command to use
ks_cli_test(run_given_plan --exit 2 --stdout-empty
            --stderr-has "short_context_rate.lua: base: the file is a plan (kvstrata plan FILE), not a scenario"
            -- run ${PROJECT_SOURCE_DIR}/scenarios/plans/short_context_rate.lua)
ks_cli_test(check_given_sweep --exit 2 --stdout-empty
            --stderr-has "l1_share.lua: base: the file is a sweep (kvstrata sweep FILE -o DIR), not a scenario"
            -- scenario check ${PROJECT_SOURCE_DIR}/scenarios/sweeps/l1_share.lua)

# Verdicts and seeds (sim/study/runfile.c, README "The simulator"; issue 16).
# A run that admits its request but produces no token: latency figures null,
# not 0, and the SLO missed.
ks_cli_test(verdict_no_token --json --eq requests_admitted 1 --eq tokens 0 --eq tpot_p99 null --eq tpot_mean null
            --eq ttft_p99 null --eq itl_p90 null --eq e2el_mean null --eq slo_margin_tpot_p99 null --eq slo_met false
            --is slo_missed "no output token, tpot_p99 (not measured)"
            -- run ${ks_fixtures}/hostile/verdict_no_token.lua -o ${CMAKE_CURRENT_BINARY_DIR}/verdict_no_token.h5 --json)
# Every objective counts: the closed form meets tpot_p99 and itl_p99 (margin 1 - 0.268435456 = 0.731564544)
# and misses ttft_p99 (1 ms), tpot_mean (0.2 ms) and e2el_mean (4 ms: margin (4 - 4.709822092) / 4)
ks_cli_test(verdict_missed --json --eq slo_met false --ge slo_margin_tpot_p99 0.731564543 --le slo_margin_tpot_p99 0.731564545
            --ge slo_margin_itl_p99 0.731564543 --le slo_margin_itl_p99 0.731564545
            --ge slo_margin_tpot_mean -0.342177281 --le slo_margin_tpot_mean -0.342177279 --lt slo_margin_ttft_p99 0
            --ge slo_margin_e2el_mean -0.177455524 --le slo_margin_e2el_mean -0.177455522
            --ge slo_tpot_mean 0.0002 --le slo_tpot_mean 0.0002 --ge slo_ttft_p99 0.001 --le slo_ttft_p99 0.001
            --is slo_missed "ttft_p99 (margin -344.1%), tpot_mean (margin -34.2%), e2el_mean (margin -17.7%)"
            -- run ${ks_fixtures}/hostile/verdict_missed.lua -o ${CMAKE_CURRENT_BINARY_DIR}/verdict_missed.h5 --json)
ks_cli_test(verdict_met --json --eq slo_met true --is slo_missed none --gt slo_margin_ttft_p99 0
            -- run ${ks_fixtures}/hostile/verdict_missed.lua --set slo.tpot_mean=1ms --set slo.ttft_p99=10ms
            --set slo.e2el_mean=10ms -o ${CMAKE_CURRENT_BINARY_DIR}/verdict_met.h5 --json)
# the seed in the result file: a 64-bit integer attribute, exact; the recorded seed reproduces the run
add_test(NAME seed_exact COMMAND ${CMAKE_CURRENT_LIST_DIR}/seed_exact.sh $<TARGET_FILE:kvstrata> ${PROJECT_SOURCE_DIR})
set_tests_properties(seed_exact PROPERTIES TIMEOUT 300)

# Hostile sweep files (tests/fixtures/hostile/; issue 16): a table that
# contains itself and a `points` function that never returns end in a clear
# error and exit 2, quickly, before any point runs.
ks_cli_test(sweep_hostile_self_ref --exit 2 --stdout-empty
            --stderr-has "sweep_self_ref.lua:9: set.again: the table contains itself"
            -- sweep ${ks_fixtures}/hostile/sweep_self_ref.lua --dry-run)
ks_cli_test(sweep_hostile_points_loop --exit 2 --stdout-empty
            --stderr-has "sweep_loop.lua:9: instruction budget of 100000000 exhausted"
            -- sweep ${ks_fixtures}/hostile/sweep_loop.lua -o ${CMAKE_CURRENT_BINARY_DIR}/sweep_loop)
set_tests_properties(cli_sweep_hostile_points_loop PROPERTIES TIMEOUT 20)

# report refuses what is not a finished result (issue 16, classes 4 and 5; files from
# tests/trace/hostile_gen.c): a partial file, a file without its completion mark, a GPU
# of -1, 2.3e18 rows claimed; result_ok.h5, made the same way, is accepted
ks_cli_test(report_hostile_ok --stdout-has "index.html"
            -- report ${ks_fixtures}/hostile/result_ok.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_hostile_ok)
set_tests_properties(cli_report_hostile_ok PROPERTIES SKIP_REGULAR_EXPRESSION "cannot run gnuplot")
ks_cli_test(report_hostile_part --exit 1 --stdout-empty --stderr-has "a partial file (NAME.part-PID)"
            -- report ${ks_fixtures}/hostile/result_ok.h5.part-4242 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
ks_cli_test(report_hostile_incomplete --exit 1 --stdout-empty
            --stderr-has "an incomplete result: attribute /complete is missing"
            -- report ${ks_fixtures}/hostile/result_incomplete.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
ks_cli_test(report_hostile_gpu_minus1 --exit 1 --stdout-empty --stderr-has "/tiers row 0: gpu is -1"
            -- report ${ks_fixtures}/hostile/result_gpu_minus1.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
# found by fuzzing (tests/fuzz/fuzz_result.c): a damaged symbol table that crashes
# HDF5 when /requests is looked up by name (SIGSEGV in H5Lexists), which listing the
# root by index never met; the probe child looks the readers' names up too
ks_cli_test(report_hostile_flip_lookup --exit 1 --stdout-empty
            --stderr-has "result_flip_lookup.h5: HDF5 fails on its metadata ("
            -- report ${ks_fixtures}/hostile/result_flip_lookup.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
# found by fuzzing (a CI run of tests/fuzz/run.sh): /steps laid out as compact storage holding
# nothing for its row; HDF5 read it through the contiguous path and copied from a null buffer
# (SIGSEGV in H5VM_memcpyvv); a contiguous or compact table must hold rows x record bytes
ks_cli_test(report_hostile_flip_compact --exit 1 --stdout-empty
            --stderr-has "/steps: 1 rows need 96 bytes, its storage holds 0: the file is damaged"
            -- report ${ks_fixtures}/hostile/result_flip_compact.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
# found by fuzzing: a deflated chunk of /steps that inflates to 6144 bytes where its 64 rows of
# a damaged 16480-byte record take 1054720; HDF5 copied rows past the inflated buffer (ASan: a
# heap overread in the main process); each chunk's inflated size is now checked (h5read.c)
ks_cli_test(report_hostile_chunk_short --exit 1 --stdout-empty
            --stderr-has "/steps: chunk 0 (row 0) inflates to 6144 bytes, not the 1054720 its 64 rows take"
            -- report ${ks_fixtures}/hostile/result_chunk_short.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
# found by fuzzing: a chunk whose stored size reads 4294909695 bytes, which HDF5 allocated
# whole before reading it (in a file of 16888 bytes)
ks_cli_test(report_hostile_chunk_huge --exit 1 --stdout-empty
            --stderr-has "result_chunk_huge.h5: /links claims 4294909695 bytes stored in a file of 16888 bytes"
            -- report ${ks_fixtures}/hostile/result_chunk_huge.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
ks_cli_test(report_hostile_rows_huge --exit 1 --stdout-empty
            --stderr-has "/requests claims 2305843009213693952 rows"
            -- report ${ks_fixtures}/hostile/result_rows_huge.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/report_bad)
# the report as a reader sees it (issue 20): a comparison and a one-run report laid out by headless
# Chromium in a phone-width frame, every image loaded, no cell's text past its cell, no page wider
# than the frame, with a negative control for each check; the screenshot stays in the build folder
add_test(NAME report_browser COMMAND ${CMAKE_CURRENT_LIST_DIR}/report_browser.sh $<TARGET_FILE:kvstrata>
         ${CMAKE_CURRENT_BINARY_DIR}/report_screenshot.png)
set_tests_properties(report_browser PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)

# Kinds (tests/kinds.cmake): objectives' margins against the closed form's figures
ks_kind(closed_form cli_verdict_missed)
