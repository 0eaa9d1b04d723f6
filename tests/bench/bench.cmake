# Kernel timing (kernels/bench), `kvstrata bench kernels`: a tiny sweep on the C references finishes in
# seconds with positive times and bandwidths; bad values are usage errors;
# --backend cuda needs a GPU; --profile writes a Lua table that a profile can
# carry. The tests that depend on whether a GPU answers ask
# `kvstrata info --json` first and report themselves skipped otherwise.

set(ks_bench_tiny --blocks 4,8 --batch 1,2 --context 512 --kv-heads 2 --q-heads 4 --head-dim 64 --repeat 3)

ks_cli_test(bench_kernels_help --stdout-has "Usage: kvstrata bench kernels" --stdout-has "--profile FILE.lua"
            --stdout-has "--backend auto|ref|cuda" --stdout-has "min_bytes_per_s" --stderr-empty
            -- bench kernels --help)
ks_cli_test(bench_kernels_listed --stdout-has "kernels" -- bench --help)

# the ref sweep: 5 kernels x 2 batches x 2 block counts, every time and
# decode bandwidth positive (the minima are), no GPU figures
ks_cli_test(bench_kernels_ref_json --json --stderr-empty --is backend ref --has device --has host --has date
            --has copy_note --ge n_points 20 --le n_points 20 --gt min_median_s 0 --gt min_bytes_per_s 0
            --has points -- bench kernels --backend ref ${ks_bench_tiny} --json)
ks_cli_test(bench_kernels_ref_one --json --is backend ref --ge n_points 1 --le n_points 1 --gt min_bytes_per_s 0
            -- bench kernels --backend ref --kernels sparse_i8 --blocks 3 --batch 2 --context 128 --kv-heads 1
            --q-heads 2 --head-dim 32 --block-size 16 --repeat 1 --json)
ks_cli_test(bench_kernels_ref_text --stdout-has "backend     ref" --stdout-has "sparse_i8" --stdout-has "GB/s"
            --stdout-has "goal" -- bench kernels --backend ref ${ks_bench_tiny})

# usage errors: exit 2, nothing on stdout, the option named
foreach(bad "blocks;0" "blocks;abc" "blocks;8,,16" "blocks;512" "batch;0" "batch;1,x" "kernels;sparse,foo"
            "backend;gpu" "repeat;0" "head-dim;257" "block-size;0" "context;1000" "q-heads;12" "kv-heads;0")
  list(GET bad 0 opt)
  list(GET bad 1 val)
  string(REGEX REPLACE "[^a-z0-9]" "_" tag "${opt}_${val}")
  ks_cli_test(bench_kernels_bad_${tag} --exit 2 --stdout-empty --stderr-has "--${opt}"
              -- bench kernels --${opt} ${val})
endforeach()
ks_cli_test(bench_kernels_profile_needs_sparse --exit 2 --stdout-empty --stderr-has "--profile"
            -- bench kernels --kernels dense --profile unused.lua)

# ks_bench_gpu_test(NAME WANT CHECKS... -- ARGS...): the test_cli checks of
# `kvstrata ARGS...`, run when no CUDA device answers (WANT none) or when one
# does (WANT some), skipped otherwise.
function(ks_bench_gpu_test name want)
  set(probe [=[$1 info --json | grep -Eq '"cuda_devices": 0([^0-9]|$)']=])
  if(want STREQUAL "none")
    set(gate "if ${probe}; then shift; exec \"$@\"; else exit ${KS_TEST_SKIP}; fi")
  else()
    set(gate "if ${probe}; then exit ${KS_TEST_SKIP}; else shift; exec \"$@\"; fi")
  endif()
  list(FIND ARGN "--" dash)
  list(SUBLIST ARGN 0 ${dash} checks)
  math(EXPR first "${dash} + 1")
  list(SUBLIST ARGN ${first} -1 args)
  add_test(NAME cli_${name} COMMAND sh -c "${gate}" sh $<TARGET_FILE:kvstrata> $<TARGET_FILE:test_cli> ${checks}
           -- $<TARGET_FILE:kvstrata> ${args})
  set_tests_properties(cli_${name} PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 300)
  ks_kind(contract cli_${name})
  ks_gpu_tests(cli_${name})
endfunction()

# no GPU: --backend cuda is a failure (exit 1) that says so; auto falls back to ref
ks_bench_gpu_test(bench_kernels_cuda_no_gpu none --exit 1 --stdout-empty --stderr-has "no GPU"
                  -- bench kernels --backend cuda ${ks_bench_tiny} --json)
ks_bench_gpu_test(bench_kernels_auto_no_gpu none --json --is backend ref --is copy_note "no GPU"
                  -- bench kernels ${ks_bench_tiny} --kernels sparse --json)
# a GPU: the CUDA kernels run, their bandwidth is compared with a measured copy
ks_bench_gpu_test(bench_kernels_cuda some --json --is backend cuda --ge n_points 20 --gt min_median_s 0
                  --gt min_bytes_per_s 0 --gt copy_bytes_per_s 0
                  -- bench kernels --backend cuda ${ks_bench_tiny} --json)

# --profile: a loadable kernel_time table, written atomically
add_test(NAME cli_bench_kernels_profile
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/bench_profile_check.sh $<TARGET_FILE:kvstrata> --backend ref
         --kernels sparse,dense ${ks_bench_tiny})
set_tests_properties(cli_bench_kernels_profile PROPERTIES TIMEOUT 300)

# kvstrata-device (the binary kernels/device_check.sh carries to a GPU
# machine) runs on its own: no simulator library, and bench kernels works
if(TARGET kvstrata-device)
  add_test(NAME device_tool_bench
    COMMAND sh -c "set -e; ldd \"$1\" | grep -Eq 'simgrid|hdf5|lua|jansson|uring' && exit 1; \
\"$1\" bench kernels --backend ref --kernels sparse --blocks 4 --batch 1 --repeat 1 --kv-heads 2 --q-heads 8 \
--head-dim 64 --block-size 16 --context 256 --json | jq -e '.backend == \"ref\" and .n_points == 1' > /dev/null"
    sh $<TARGET_FILE:kvstrata-device>)
endif()

# tests/bench/speed.sh (issue 19): --quick on the dense case and bench cache,
# the built binary as base and new, prints its table and JSON lines with
# positive figures and ratios (a few seconds)
add_test(NAME bench_speed_quick COMMAND ${CMAKE_CURRENT_LIST_DIR}/speed_check.sh $<TARGET_FILE:kvstrata>)
set_tests_properties(bench_speed_quick PROPERTIES TIMEOUT 120)

# tests/bench/goals.sh (issue 19's goals): --quick prints a row per goal with
# a figure, no verdict and its command, keeps what it printed with --out, and
# --table-only reprints it (about 10 s)
add_test(NAME bench_goals_quick COMMAND ${CMAKE_CURRENT_LIST_DIR}/goals_check.sh $<TARGET_FILE:kvstrata>)
set_tests_properties(bench_goals_quick PROPERTIES TIMEOUT 180)

# results/speed/README.md: its table of the goals is what goals.sh
# --table-only prints from the record beside it (each line of the output is
# a line of the README): 12 goals, each judged (the latest record,
# 2026-12-07c_xeon)
add_test(NAME bench_goals_record
  COMMAND sh -c "set -e; d=\"$1/results/speed\"; \
bash \"$1/tests/bench/goals.sh\" --table-only \"$d/2026-12-07c_xeon\" > goals_record.txt; \
[ $(grep -c '^\\(bench cache\\|dense\\|512 GPUs\\|loaded 512\\|1,024 GPUs\\)' goals_record.txt) = 12 ] || { echo 'not 12 goals' >&2; exit 1; }; \
[ $(grep -c ' \\(met\\|missed\\) ' goals_record.txt) = 12 ] || { echo 'not 12 verdicts' >&2; exit 1; }; \
while IFS= read -r l; do [ -z \"$l\" ] || grep -Fxq -- \"$l\" \"$d/README.md\" || { echo \"not in the README: $l\" >&2; exit 1; }; done < goals_record.txt"
  sh ${PROJECT_SOURCE_DIR})
set_tests_properties(bench_goals_record PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# README "Measured", on the heat row's run of the bench cache table: "(prefetch accuracy 12%): per
# step, about 2 misses become about 11 promotions, 11 L1 victims and 8 L2 victims". Each figure to
# the README's rounding (12% -> [0.115, 0.125], about 2 -> [1.5, 2.5], 11 -> [10.5, 11.5]): the
# prefetched blocks later used over those prefetched, L1 misses, migrations into L1, L1 and L2
# evictions, each over the 20000 steps (json_figures.sh: jq expressions of the JSON, bounded)
add_test(NAME bench_readme_heat_per_step
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/json_figures.sh $<TARGET_FILE:kvstrata>
         prefetch_accuracy ".prefetch_used / .prefetch_issued" 0.115 0.125
         misses_per_step "(.accesses - .found_l1) / .steps" 1.5 2.5
         promotions_per_step "(.migrated_l2_l1 + .migrated_l3_l1) / .steps" 10.5 11.5
         l1_victims_per_step ".evictions_l1 / .steps" 10.5 11.5
         l2_victims_per_step ".evictions_l2 / .steps" 7.5 8.5
         -- bench cache --blocks 1000000 --topk 64 --steps 20000 --policy heat --json)
set_tests_properties(bench_readme_heat_per_step PROPERTIES TIMEOUT 300)
