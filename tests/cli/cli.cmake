# The kvstrata command (sim/cli): the option parser, help, usage errors (exit
# 2, nothing on stdout), and --json output that is exactly one JSON object
# with sane figures. Each command-line test runs one command line under
# test_cli (ks_cli_test, helpers.cmake), which checks its exit status and
# output (see tests/cli/test_cli.c for the checks).

ks_add_test(cli.parse test_cli_parse.c ${PROJECT_SOURCE_DIR}/sim/cli/cli.c)
target_include_directories(cli_parse PRIVATE ${PROJECT_SOURCE_DIR}/sim/cli)
# the option kinds `scenario check` added to the parser: a repeatable string
# (--set) and a positional argument
ks_add_test(cli.kinds test_cli_kinds.c ${PROJECT_SOURCE_DIR}/sim/cli/cli.c)
target_include_directories(cli_kinds PRIVATE ${PROJECT_SOURCE_DIR}/sim/cli)

# help and version: exit 0, usage on stdout, only commands that exist
ks_cli_test(help --stdout-has "Usage: kvstrata" --stdout-has "bench cache" --stdout-has "info"
            --stdout-has "sweep" --stdout-lacks "frobnicate" --stderr-empty -- --help)
ks_cli_test(help_short --stdout-has "Usage: kvstrata" -- -h)
ks_cli_test(version --stdout-has "kvstrata ${PROJECT_VERSION}" -- --version)
ks_cli_test(help_bench --stdout-has "Usage: kvstrata bench" --stdout-has "cache" -- bench --help)
ks_cli_test(help_bench_cache --stdout-has "Usage: kvstrata bench cache" --stdout-has "--blocks"
            --stdout-has "--policy heat|lru|lfu|belady" --stdout-has "--json" --stderr-empty -- bench cache --help)
ks_cli_test(help_info --stdout-has "Usage: kvstrata info" --stdout-has "--json" -- info --help)
ks_cli_test(run_help --stdout-has "Usage: kvstrata run SCENARIO.lua" --stdout-has "--output" -- run --help)
# README "Every command has `--help`": plan, validate and trace model too (exit 0, usage on stdout,
# nothing on stderr)
ks_cli_test(help_plan --stdout-has "Usage: kvstrata plan PLAN.lua" --stdout-has "--output DIR" --stdout-has "--json"
            --stderr-empty -- plan --help)
ks_cli_test(help_validate --stdout-has "Usage: kvstrata validate SCENARIO.lua" --stdout-has "--device cpu|gpu"
            --stdout-has "--json" --stderr-empty -- validate --help)
ks_cli_test(help_trace_model --stdout-has "Usage: kvstrata trace model TRACE.h5" --stdout-has "--output OUT.h5"
            --stdout-has "--json" --stderr-empty -- trace model --help)

# usage errors: exit 2, nothing on stdout, the culprit named on stderr
ks_cli_test(no_command --exit 2 --stdout-empty --stderr-has "Usage: kvstrata" --)
ks_cli_test(unknown_command --exit 2 --stdout-empty --stderr-has "frobnicate" -- frobnicate)
ks_cli_test(unknown_subcommand --exit 2 --stdout-empty --stderr-has "'frob'" -- bench frob)
ks_cli_test(missing_subcommand --exit 2 --stdout-empty --stderr-has "cache" -- bench)
ks_cli_test(unknown_top_option --exit 2 --stdout-empty --stderr-has "--frob" -- --frob)
ks_cli_test(unknown_option --exit 2 --stdout-empty --stderr-has "--frob" --stderr-has "--help"
            -- bench cache --frob)
ks_cli_test(unknown_option_info --exit 2 --stdout-empty --stderr-has "--frob" -- info --frob)
ks_cli_test(stray_argument --exit 2 --stdout-empty --stderr-has "'extra'" -- info extra)
ks_cli_test(bad_number --exit 2 --stdout-empty --stderr-has "--blocks" --stderr-has "abc"
            -- bench cache --blocks abc)
ks_cli_test(bad_number_eq --exit 2 --stdout-empty --stderr-has "--blocks" -- bench cache --blocks=abc)
ks_cli_test(negative_number --exit 2 --stdout-empty --stderr-has "--blocks" --stderr-has "negative"
            -- bench cache --blocks -5)
ks_cli_test(zero_topk --exit 2 --stdout-empty --stderr-has "--topk" -- bench cache --topk 0)
ks_cli_test(overflow --exit 2 --stdout-empty --stderr-has "--steps" -- bench cache --steps 4294967296)
ks_cli_test(missing_value --exit 2 --stdout-empty --stderr-has "--seed" -- bench cache --seed)
ks_cli_test(flag_value --exit 2 --stdout-empty --stderr-has "--json" -- bench cache --json=1)
ks_cli_test(bad_policy --exit 2 --stdout-empty --stderr-has "--policy" -- bench cache --policy fifo)
ks_cli_test(bad_fraction --exit 2 --stdout-empty --stderr-has "--l1" -- bench cache --l1 1.5)
ks_cli_test(nan_fraction --exit 2 --stdout-empty --stderr-has "--l2" -- bench cache --l2 nan)
ks_cli_test(empty_l1 --exit 2 --stdout-empty --stderr-has "--l1" -- bench cache --blocks 10 --topk 1 --l1 0.01)
ks_cli_test(topk_over_blocks --exit 2 --stdout-empty --stderr-has "--topk" -- bench cache --blocks 10 --topk 11)

# --json: exactly one object, sane figures, nothing on stderr (not a terminal)
set(ks_bench_checks --json --stderr-empty --gt accesses_per_s 0 --gt bytes_per_block 16
    --lt bytes_per_block 64 --ge hit_rate_l1 0 --le hit_rate_l1 1 --gt accesses 0 --has found_l1
    --has migrated_l3_l1 --has heat_rebases)
ks_cli_test(bench_json ${ks_bench_checks} --is policy heat
            -- bench cache --blocks 20000 --topk 32 --steps 300 --json)
ks_cli_test(bench_json_eq ${ks_bench_checks} --is policy lru --gt migrated_l3_l1 0
            -- bench cache --blocks=20000 --topk=32 --steps=300 --policy=lru --l3=1 --json)
# README "Measured", the bench cache table: each row's L1 hit rate (4 decimals) and bytes per
# block (1 decimal) as printed there; the speeds are the machine's and are not asserted
ks_cli_test(bench_readme_heat --json --ge hit_rate_l1 0.96455 --le hit_rate_l1 0.96465
            --ge bytes_per_block 21.95 --le bytes_per_block 22.05
            -- bench cache --blocks 1000000 --topk 64 --steps 20000 --policy heat --json)
ks_cli_test(bench_readme_heat_window0 --json --ge hit_rate_l1 0.94955 --le hit_rate_l1 0.94965
            --ge bytes_per_block 21.85 --le bytes_per_block 21.95
            -- bench cache --blocks 1000000 --topk 64 --steps 20000 --policy heat --window 0 --json)
ks_cli_test(bench_readme_lru --json --ge hit_rate_l1 0.96505 --le hit_rate_l1 0.96515
            --ge bytes_per_block 21.95 --le bytes_per_block 22.05
            -- bench cache --blocks 1000000 --topk 64 --steps 20000 --policy lru --json)
ks_cli_test(bench_readme_lfu --json --ge hit_rate_l1 0.96455 --le hit_rate_l1 0.96465
            --ge bytes_per_block 25.95 --le bytes_per_block 26.05
            -- bench cache --blocks 1000000 --topk 64 --steps 20000 --policy lfu --json)
ks_cli_test(bench_readme_belady --json --ge hit_rate_l1 0.96895 --le hit_rate_l1 0.96905
            --ge bytes_per_block 38.55 --le bytes_per_block 38.65
            -- bench cache --blocks 1000000 --topk 64 --steps 20000 --policy belady --json)
ks_cli_test(bench_readme_random --json --ge hit_rate_l1 0.96335 --le hit_rate_l1 0.96345
            --ge bytes_per_block 21.95 --le bytes_per_block 22.05
            -- bench cache --blocks 1000000 --topk 64 --steps 20000 --policy random --json)
ks_cli_test(bench_text --stdout-has "accesses_per_s" --stdout-has "bytes_per_block" --stdout-has "hit_rate_l1"
            -- bench cache --blocks 2000 --topk 8 --steps 100)
ks_cli_test(info_json --json --stderr-empty --has version --has build_type --has cuda_kernels
            --ge cuda_devices 0 -- info --json)
ks_cli_test(info_text --stdout-has "version" --stdout-has "cpu" --stdout-has "cuda_devices" -- info)
# info names this machine's CPU as calibrations record it (read here on its
# own: the first non-empty model name or Model line of /proc/cpuinfo) and its
# online CPUs; the benchmark scripts' headers take it from there
add_test(NAME cli_info_cpu
  COMMAND sh -c "set -e; cpu=$(sed -n -E 's/^(model name|Model)[^:]*:[[:space:]]*//p' /proc/cpuinfo | grep -m 1 . || true); \
cpu=\${cpu:-unknown CPU}; \"$1\" info --json | jq -e --arg c \"$cpu\" --argjson n $(nproc) '.cpu == $c and .cores == $n' > /dev/null"
  sh $<TARGET_FILE:kvstrata>)
ks_kind(contract cli_info_cpu)

# --seed takes the whole 64-bit range (issue 16): 2^64 - 1 runs and is recorded
# exactly; one more is a usage error about --seed, not about --set
ks_cli_test(run_seed_max --json --eq seed "\"18446744073709551615\"" --eq tokens 2
            -- run ${ks_ts}/closed_form.lua --seed 18446744073709551615
            -o ${CMAKE_CURRENT_BINARY_DIR}/seed_max.h5 --json)
ks_cli_test(run_seed_over --exit 2 --stdout-empty
            --stderr-has "--seed 18446744073709551616: '18446744073709551616' is out of range"
            --stderr-has "expected an integer from 0 to 18446744073709551615"
            -- run ${ks_ts}/closed_form.lua --seed 18446744073709551616)

# -o refuses the run's inputs (the scenario, through a link too; a replayed trace) and
# anything that is not a regular file (a folder, a FIFO, a device node), leaving it as it
# was; a FIFO as the scenario is refused, not read; a scenario named ../../x keeps its
# result in results/ (issue 16, class 6)
add_test(NAME cli_output_guard COMMAND ${CMAKE_CURRENT_LIST_DIR}/output_guard.sh $<TARGET_FILE:kvstrata> ${ks_ts})
set_tests_properties(cli_output_guard PROPERTIES TIMEOUT 300)
