# Scenario language (sim/scenario): units, loading, validation, profiles, the
# `scenario check` command, bad scenarios that `kvstrata run` refuses, and
# cache policies written in Lua.

ks_add_test(scenario.units test_units.c)
target_link_libraries(scenario_units PRIVATE ks_scenario)
ks_add_test(scenario.scenario test_scenario.c)
target_link_libraries(scenario_scenario PRIVATE ks_scenario)
target_compile_definitions(scenario_scenario PRIVATE KS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# The `scenario check` command: exit codes, text and JSON (runner: test_cli, helpers.cmake).
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

# bad scenarios that `kvstrata run` refuses (exit 2), naming the key
ks_cli_test(run_bad --exit 2 --stdout-empty --stderr-has "cache.block_size"
            -- run ${ks_ts}/closed_form.lua --set cache.block_size=-3)
ks_cli_test(run_bad_q_heads --exit 2 --stdout-empty --stderr-has "model.q_heads"
            -- run ${ks_ts}/closed_form.lua --set model.q_heads=12)
ks_cli_test(run_bad_kernel_time --exit 2 --stdout-empty --stderr-has "kernel_time.blocks"
            --stderr-has "bad_kernel_time.lua"
            -- run ${ks_ts}/bad_kernel_time.lua -o ${CMAKE_CURRENT_BINARY_DIR}/bad_kernel_time.h5)
ks_cli_test(policy_trace_needs_file --exit 2 --stdout-empty --stderr-has "sparse.file"
            -- run ${ks_pol} --set sparse.policy=trace)
# a trace or a fit that is missing or not HDF5 is a scenario error, at its line
ks_cli_test(policy_trace_not_hdf5 --exit 2 --stdout-empty
            --stderr-has "--set: sparse.file: '${ks_fixtures}/golden/default_10s.json' is not an HDF5 file"
            -- run ${ks_pol} --set sparse.policy=trace --set sparse.file=${ks_fixtures}/golden/default_10s.json
            -o ${CMAKE_CURRENT_BINARY_DIR}/policy_bad.h5)
ks_cli_test(policy_fit_not_hdf5 --exit 2 --stdout-empty --stderr-has "bad_fit.lua:5: sparse.fit: '"
            --stderr-has "bad_fit.lua' is not an HDF5 file" --stderr-has "bad_fit.lua:6: sparse.file: '"
            -- run ${ks_ts}/bad_fit.lua -o ${CMAKE_CURRENT_BINARY_DIR}/policy_bad.h5)
ks_cli_test(policy_fit_missing --exit 2 --stdout-empty
            --stderr-has "--set: sparse.fit: cannot read '${CMAKE_CURRENT_BINARY_DIR}/none.h5': No such file or directory"
            -- run ${ks_pol} --set sparse.policy=model --set sparse.fit=${CMAKE_CURRENT_BINARY_DIR}/none.h5
            -o ${CMAKE_CURRENT_BINARY_DIR}/policy_bad.h5)
# the network topologies the platform does not model are refused by name
ks_cli_test(scenario_topology_refused --exit 2 --stdout-empty --stderr-has "platform.network.topology"
            --stderr-has "fat_tree"
            -- run ${PROJECT_SOURCE_DIR}/scenarios/default.lua --set platform.network.topology=torus
            -o ${CMAKE_CURRENT_BINARY_DIR}/topology_bad.h5)
# a trace's kernel times are charged only when replaying one
ks_cli_test(policy_kernel_time_needs_trace --exit 2 --stdout-empty --stderr-has "sparse.kernel_time"
            --stderr-has "needs sparse.policy = \"trace\""
            -- run ${ks_pol} --set sparse.kernel_time=trace -o ${CMAKE_CURRENT_BINARY_DIR}/policy_kt.h5)

# Cache policies written in Lua (luapolicy.c). cache.evict as a Lua
# function: LRU written in Lua equals the built-in lru (same_summary.sh)
add_test(NAME policy_lua_lru_is_lru COMMAND ${CMAKE_CURRENT_LIST_DIR}/same_summary.sh $<TARGET_FILE:kvstrata>
         ${ks_ts}/lua_lru.lua -- ${ks_pol} --set sparse.policy=random --set cache.evict=lru)
ks_cli_test(policy_lua_bad --exit 1 --stdout-empty --stderr-has "cache.evict (Lua): the function returned a string"
            -- run ${ks_ts}/lua_bad.lua -o ${CMAKE_CURRENT_BINARY_DIR}/lua_bad.h5)
ks_cli_test(policy_lua_named --exit 2 --stdout-empty --stderr-has "a Lua policy is a function"
            -- run ${ks_pol} --set "cache.evict=lua function")
ks_cli_test(bench_cache_lua --json --is policy lua --gt accesses_per_s 0
            -- bench cache --blocks 20000 --topk 32 --steps 500 --lua ${ks_ts}/lua_lru_policy.lua --json)
# the prefetch rule as a Lua function: a constant 4 equals prefetch_window = 4
# (and differs from no prefetch: prefetch_accuracy 0.136 against 0)
add_test(NAME policy_lua_prefetch_is_window COMMAND ${CMAKE_CURRENT_LIST_DIR}/same_summary.sh $<TARGET_FILE:kvstrata>
         ${ks_ts}/lua_prefetch.lua -- ${ks_pol} --set sparse.policy=random
         --set sparse.budget_tokens=256 --set cache.prefetch_window=4)
ks_cli_test(policy_lua_prefetch_prefetches --json --gt prefetch_accuracy 0.05
            -- run ${ks_ts}/lua_prefetch.lua -o ${CMAKE_CURRENT_BINARY_DIR}/lua_prefetch.h5 --json)
