# The real runtime (kernels/runtime): its decode step over real memory
# tiers, and `kvstrata validate` against the simulator.
#
# The cache manager driven from several threads the way a runtime drives it:
# one mutex around every call into the manager, page copies outside it,
# readers that check their reads with ks_cache_locate + ks_cache_validate.
# Labelled tsan (ks_tsan_test): .ci/run builds and runs them under
# ThreadSanitizer.

ks_add_test(runtime.stale_reads test_stale_reads.c)
target_link_libraries(runtime_stale_reads PRIVATE Threads::Threads)
ks_tsan_test(runtime.stale_reads)
# its negative control: batches started before their `after` is confirmed must let stale reads
# through and the test must see them (about 280 a run on this machine; asserted > 0)
add_test(NAME runtime.stale_reads_early COMMAND sh -c
         "out=$(KS_STALE_EARLY=1 \"$1\") && echo \"$out\" | grep -q 'KS_STALE_EARLY: after not waited for'"
         sh $<TARGET_FILE:runtime_stale_reads>)
set_tests_properties(runtime.stale_reads_early PROPERTIES LABELS runtime)

# The runtime on a scenario with all three tiers busy: every request
# finishes, in-flight blocks are read at their destination, no read is
# refused, and two runs make the same cache decisions (under TSan too).
ks_add_test(runtime.runtime test_runtime.c)
target_link_libraries(runtime_runtime PRIVATE ks_runtime)
target_compile_definitions(runtime_runtime PRIVATE KS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
ks_tsan_test(runtime.runtime)
# GPU mode: its own test, skipped (77) without a GPU rather than passed
add_test(NAME runtime.runtime_gpu COMMAND runtime_runtime gpu)
set_tests_properties(runtime.runtime_gpu PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 600)
ks_kind(unit runtime.runtime_gpu)

# The wrappers of kernels/kernel.h that GPU mode is built on (streams, events,
# copies, pinned memory), on streams of their own: without a device each must
# answer KS_KERNEL_ENODEV with a reason, then the test skips (77).
ks_add_kernel_test(runtime.gpu_wrappers test_gpu_wrappers.c)
target_link_libraries(runtime_gpu_wrappers PRIVATE ks_kernels)
ks_gpu_tests(runtime.runtime_gpu runtime.gpu_wrappers)

# kvstrata validate: a scenario is required; the GPU mode is refused with the reason
ks_cli_test(validate_no_scenario --exit 2 --stdout-empty --stderr-has "SCENARIO.lua" -- validate)
ks_cli_test(validate_gpu_refused --exit 1 --stdout-empty --stderr-has "no GPU answers here"
            -- validate x.lua --device gpu)

# kvstrata validate: the runtime and the simulator make identical decisions
# (the command fails otherwise) and the report carries every row, with the
# goals README states ("goals: P50 within 5%, P99 within 10%"): itl_p50 0.05,
# itl_p99 0.1.
add_test(NAME cli_validate_tiny
  COMMAND sh -c "set -e; out=$(\"$1\" validate \"$2\" --json --dir /var/tmp); \
echo \"$out\" | jq -e '.hit_rates_identical == true and .runtime_stale_refused == 0 and (.rows | length) == 18 \
and .runtime_table_refreshed > 0 \
and ([.rows[] | select(.metric == \"table_rebuilds\") | .identical] == [true]) \
and ([.rows[] | select(.metric == \"itl_p50\") | .goal] == [0.05]) \
and ([.rows[] | select(.metric == \"itl_p99\") | .goal] == [0.1]) \
and .in_run_kernel_s_per_block > 0 and (.with_runtime_kernel_speed.rows | length) == 5 \
and (.with_runtime_step_speeds.rows | length) == 5 \
and ([.with_runtime_kernel_speed.rows[] | select(.metric == \"itl_mean\") | .simulator] | .[0] > 0) \
and .runtime_step_kernel_p10_s_per_block > 0 \
and .runtime_step_kernel_p10_s_per_block <= .runtime_step_kernel_p50_s_per_block \
and .runtime_step_kernel_p50_s_per_block <= .runtime_step_kernel_p90_s_per_block \
and .runtime_step_kernel_p90_s_per_block <= .runtime_step_kernel_p99_s_per_block' > /dev/null"
  sh $<TARGET_FILE:kvstrata> ${ks_ts}/runtime_tiny.lua)
# README "The six validation scenarios are in `scenarios/validation/`": exactly these six
# (the ones results/fidelity/run.sh measures), each accepted by `scenario check`
add_test(NAME cli_validation_scenarios
  COMMAND sh -c "set -e; export LC_ALL=C; cd \"$2\"; names=$(ls *.lua | tr '\\n' ' '); \
want='l2_bound.lua noisy_selection.lua prefetch_heavy.lua resident.lua shared_prefix.lua ssd_bound.lua '; \
if [ \"$names\" != \"$want\" ]; then echo \"scenarios/validation/ holds: $names; want: $want\" >&2; exit 1; fi; \
for f in $names; do \"$1\" scenario check \"$f\" --json > /dev/null || { echo \"scenario check refuses $f\" >&2; exit 1; }; done"
  sh $<TARGET_FILE:kvstrata> ${PROJECT_SOURCE_DIR}/scenarios/validation)
add_test(NAME cli_validate_refuses
  COMMAND sh -c "\"$1\" validate \"$2\" 2> validate_refuses.err; rc=$?; [ $rc -ne 0 ] && grep -q 'runtime cannot run this scenario: platform' validate_refuses.err"
  sh $<TARGET_FILE:kvstrata> ${PROJECT_SOURCE_DIR}/tests/fixtures/scenarios/seed_default.lua)
set_tests_properties(cli_validate_refuses PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# validate -o writes the simulator's and the runtime's results in the layout
# of kvstrata run: the same summary attributes and the same datasets.
add_test(NAME cli_validate_results
  COMMAND sh -c "set -e; rm -rf vo; mkdir vo; \"$1\" validate \"$2\" -o vo --dir /var/tmp > /dev/null; \
\"$1\" run \"$2\" -o vo/run.h5 > /dev/null; \
for f in vo/runtime_tiny_sim.h5 vo/runtime_tiny_runtime.h5 vo/run.h5; do \
  h5dump -A \"$f\" | grep -E '^ *(ATTRIBUTE|DATASET|GROUP) ' | sed 's/ *$//' > \"$f.names\"; \
  [ $(wc -l < \"$f.names\") -gt 20 ]; done; \
cmp vo/runtime_tiny_sim.h5.names vo/run.h5.names; cmp vo/runtime_tiny_runtime.h5.names vo/run.h5.names; \
h5dump -a /summary/table_rebuilds vo/runtime_tiny_runtime.h5 | grep -q '(0): [1-9]'"
  sh $<TARGET_FILE:kvstrata> ${ks_ts}/runtime_tiny.lua)
set_tests_properties(cli_validate_results PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# L1 too small for every request's selection: the misses without room are
# read outside L1, by the runtime and in the simulator alike (outside_reads)
add_test(NAME cli_validate_outside
  COMMAND sh -c "set -e; out=$(\"$1\" validate \"$2\" --json --dir /var/tmp --set platform.hbm_bytes=1MB); \
echo \"$out\" | jq -e '[.rows[] | select(.metric == \"outside_reads\") | select(.identical and .runtime > 0)] | length == 1' > /dev/null"
  sh $<TARGET_FILE:kvstrata> ${ks_ts}/runtime_tiny.lua)

# --measure-kernels times the kernel for the scenario's own head shape: a
# scenario whose shape differs from the profile's table runs with it (and is
# refused without it)
add_test(NAME cli_validate_measure_kernels
  COMMAND sh -c "set -e; if \"$1\" validate \"$2\" --dir /var/tmp --set model.q_heads=2 > /dev/null 2> validate_measure_kernels.err; then exit 1; fi; \
grep -q 'was measured with q_heads = 8' validate_measure_kernels.err; \
out=$(\"$1\" validate \"$2\" --json --dir /var/tmp --set model.q_heads=2 --measure-kernels); \
echo \"$out\" | jq -e '.hit_rates_identical == true and .in_run_kernel_s_per_block > 0' > /dev/null"
  sh $<TARGET_FILE:kvstrata> ${ks_ts}/runtime_tiny.lua)
set_tests_properties(cli_validate_measure_kernels PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# results/fidelity/2026-12-06_xeon/README.md: its tables are those
# results/fidelity/run.sh --table-only prints from the JSON files beside it
# (each line of the output is a line of the README), for both profiles.
add_test(NAME fidelity_xeon_tables
  COMMAND sh -c "set -e; d=\"$1/results/fidelity/2026-12-06_xeon\"; \
for p in epyc_profile xeon_profile; do \
  bash \"$1/results/fidelity/run.sh\" --table-only --out \"$d/$p\" > fidelity_$p.md; \
  [ $(grep -c '^| ' fidelity_$p.md) -ge 24 ] || { echo \"$p: too few table rows\" >&2; exit 1; }; \
  grep '^| ' fidelity_$p.md | while IFS= read -r l; do grep -Fxq -- \"$l\" \"$d/README.md\" || { echo \"$p: not in the README: $l\" >&2; exit 1; }; done; \
done"
  sh ${PROJECT_SOURCE_DIR})
set_tests_properties(fidelity_xeon_tables PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} LABELS runtime)

# validate names the CPU the profile was measured on and this machine's, and
# warns when they differ: a profile that says another CPU (the inline one of
# runtime_other_cpu.lua), and the shipped devvm_cpu_runtime (an AMD EPYC's:
# the warning exactly when this machine's CPU is another; the CPU read as
# sim/base/machine.c reads it: the first non-empty model name or Model line)
ks_cli_test(validate_other_cpu --json --is profile inline --is profile_cpu "a CPU no machine reports"
            --has host_cpu --stderr-has "warning: profile inline was measured on a CPU no machine reports, this machine is"
            --stderr-has "kvstrata calib host" -- validate ${ks_ts}/runtime_other_cpu.lua --json)
add_test(NAME cli_validate_profile_cpu
  COMMAND sh -c "set -e; \"$1\" validate \"$2\" --json > vcpu.json 2> vcpu.err; \
cpu=$(sed -n -E 's/^(model name|Model)[^:]*:[[:space:]]*//p' /proc/cpuinfo | grep -m 1 . || true); cpu=\${cpu:-unknown CPU}; \
jq -e --arg c \"$cpu\" '.profile == \"devvm_cpu_runtime\" and .profile_cpu == \"AMD EPYC\" and .host_cpu == $c' vcpu.json > /dev/null \
  || { echo 'profile_cpu or host_cpu wrong' >&2; jq -c '{profile, profile_cpu, host_cpu}' vcpu.json >&2; exit 1; }; \
if [ \"$cpu\" = 'AMD EPYC' ]; then ! grep -q warning vcpu.err; else grep -q 'warning: profile devvm_cpu_runtime was measured on AMD EPYC' vcpu.err; fi"
  sh $<TARGET_FILE:kvstrata> ${ks_ts}/runtime_tiny.lua)
set_tests_properties(cli_validate_profile_cpu PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
