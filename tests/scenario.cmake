# Scenario language: units, loading, validation, profiles.

ks_add_test(scenario_units test_units.c)
target_link_libraries(scenario_units PRIVATE ks_scenario)
ks_add_test(scenario_load test_scenario.c)
target_link_libraries(scenario_load PRIVATE ks_scenario)
target_compile_definitions(scenario_load PRIVATE KS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# The `scenario check` command: exit codes, text and JSON (runner: cli.cmake).
function(ks_scenario_cli_test name)
  list(FIND ARGN "--" dash)
  list(SUBLIST ARGN 0 ${dash} checks)
  math(EXPR first "${dash} + 1")
  list(LENGTH ARGN n)
  set(args "")
  if(first LESS n)
    list(SUBLIST ARGN ${first} -1 args)
  endif()
  add_test(NAME scenario_${name} COMMAND test_cli ${checks} -- $<TARGET_FILE:kvstrata> scenario check ${args})
  set_tests_properties(scenario_${name} PROPERTIES TIMEOUT 60)
endfunction()
set(ks_sc ${PROJECT_SOURCE_DIR}/scenarios)
set(ks_ts ${PROJECT_SOURCE_DIR}/tests/scenarios)
ks_scenario_cli_test(check_help --stdout-has "Usage: kvstrata scenario check SCENARIO.lua" --stdout-has "--set PATH=VALUE"
                     --stdout-has "--json" --stderr-empty -- --help)
ks_scenario_cli_test(check_default_json --json --stderr-empty --is file ${ks_sc}/default.lua
                     --is platform.profile h200_sxm_pcie5 --gt platform.hbm_bw 4.79e12 --lt platform.hbm_bw 4.81e12
                     --ge cache.block_size 32 --le cache.block_size 32 --is cache.evict heat --has origin --has unit
                     -- ${ks_sc}/default.lua --json)
ks_scenario_cli_test(check_default_text --stdout-has "cache.block_size" --stdout-has "4.8TBps"
                     --stdout-has "[datasheet]" --stdout-has "default.lua:" -- ${ks_sc}/default.lua)
ks_scenario_cli_test(check_set --json --ge cache.block_size 16 --le cache.block_size 16 --is cache.evict lru
                     --ge platform.ssd.read_bw 7e9 --le platform.ssd.read_bw 7e9
                     -- ${ks_sc}/default.lua --set cache.block_size=16 --set=cache.evict=lru
                        --set platform.ssd.read_bw=7GBps --json)
ks_scenario_cli_test(check_bad_set --exit 2 --stdout-empty --stderr-has "--set: cache.blok_size: unknown field"
                     -- ${ks_sc}/default.lua --set cache.blok_size=16 --json)
ks_scenario_cli_test(check_bad_value --exit 2 --stdout-empty --stderr-has "--set: cache.l1: '85 %' has a space"
                     -- ${ks_sc}/default.lua "--set=cache.l1=85 %")
ks_scenario_cli_test(check_bad_file --exit 2 --stdout-empty
                     --stderr-has "bad_unknown.lua:4: cache.blok_size: unknown field" --stderr-has "did you mean 'block_size'?"
                     -- ${ks_ts}/bad_unknown.lua --json)
ks_scenario_cli_test(check_missing --exit 2 --stdout-empty --stderr-has "missing SCENARIO.lua" --)
ks_scenario_cli_test(check_two_files --exit 2 --stdout-empty --stderr-has "unexpected argument"
                     -- ${ks_sc}/default.lua ${ks_sc}/default.lua)
ks_add_test(scenario_cli_kinds test_cli_kinds.c ${PROJECT_SOURCE_DIR}/sim/cli/cli.c)
target_include_directories(scenario_cli_kinds PRIVATE ${PROJECT_SOURCE_DIR}/sim/cli)
