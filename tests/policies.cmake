# Selection policies in kvstrata run: synthetic attention through the scoring
# kernel (topk, retrieval, mixed), trace replay. tests/scenarios/policies.lua:
# one GPU, 4 layers, 4K prompts, L1 of 40 MB (a third of the batch's blocks).
set(ks_pol ${PROJECT_SOURCE_DIR}/tests/scenarios/policies.lua)
set(ks_pol_ok --json --ge requests_finished 4 --ge tokens 512 --le tokens 512 --gt hit_rate_l1 0 --le hit_rate_l1 1
    --ge stall_fraction 0 --le stall_fraction 1 --gt migrated_bytes_l2_l1 0)
foreach(policy topk retrieval mixed)
  ks_cli_test(policy_${policy} ${ks_pol_ok}
              -- run ${ks_pol} --set sparse.policy=${policy} -o ${CMAKE_CURRENT_BINARY_DIR}/policy_${policy}.h5 --json)
endforeach()
# the query's motion decides what tiering can do: hit_rate_l1 0.991 (stable)
# against 0.825 (noisy: frequent topic switches and retrieval jumps)
ks_compare(policy_stable_beats_noisy hit_rate_l1 gt 1.1
           -- ${ks_pol} --set sparse.preset=stable -- ${ks_pol} --set sparse.preset=noisy)
add_test(NAME trace_replay COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/trace_replay.sh $<TARGET_FILE:kvstrata> ${ks_pol})
set_tests_properties(trace_replay PROPERTIES TIMEOUT 600)
# results/README.md's h5py example, run as written there: its trace (string
# attributes in variable-length UTF-8) is read by trace stats and replayed
add_test(NAME trace_h5py COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/trace_h5py.sh $<TARGET_FILE:kvstrata>
         ${PROJECT_SOURCE_DIR}/results/README.md ${ks_pol})
set_tests_properties(trace_h5py PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 300)
# trace record times the decode kernel of each record (--backend ref, auto,
# cuda); a replay charges those times: sim_time moves by the closed form
add_test(NAME trace_kernel_time COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/trace_kernel_time.sh $<TARGET_FILE:kvstrata>
         ${ks_pol})
set_tests_properties(trace_kernel_time PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 300)
ks_cli_test(policy_trace_needs_file --exit 2 --stdout-empty --stderr-has "sparse.file"
            -- run ${ks_pol} --set sparse.policy=trace)
# a trace or a fit that is missing or not HDF5 is a scenario error, at its line
ks_cli_test(policy_trace_not_hdf5 --exit 2 --stdout-empty
            --stderr-has "--set: sparse.file: '${PROJECT_SOURCE_DIR}/tests/golden/default_10s.json' is not an HDF5 file"
            -- run ${ks_pol} --set sparse.policy=trace --set sparse.file=${PROJECT_SOURCE_DIR}/tests/golden/default_10s.json
            -o ${CMAKE_CURRENT_BINARY_DIR}/policy_bad.h5)
ks_cli_test(policy_fit_not_hdf5 --exit 2 --stdout-empty --stderr-has "bad_fit.lua:5: sparse.fit: '"
            --stderr-has "bad_fit.lua' is not an HDF5 file" --stderr-has "bad_fit.lua:6: sparse.file: '"
            -- run ${PROJECT_SOURCE_DIR}/tests/scenarios/bad_fit.lua -o ${CMAKE_CURRENT_BINARY_DIR}/policy_bad.h5)
ks_cli_test(policy_fit_missing --exit 2 --stdout-empty
            --stderr-has "--set: sparse.fit: cannot read '${CMAKE_CURRENT_BINARY_DIR}/none.h5': No such file or directory"
            -- run ${ks_pol} --set sparse.policy=model --set sparse.fit=${CMAKE_CURRENT_BINARY_DIR}/none.h5
            -o ${CMAKE_CURRENT_BINARY_DIR}/policy_bad.h5)
# a result file is HDF5 but not a trace (the closed-form run writes it first)
ks_cli_test(policy_trace_not_trace --exit 1 --stdout-empty --stderr-has "not a kvstrata trace"
            -- run ${ks_pol} --set sparse.policy=trace --set sparse.file=${CMAKE_CURRENT_BINARY_DIR}/closed_form.h5
            -o ${CMAKE_CURRENT_BINARY_DIR}/policy_bad.h5)
set_tests_properties(cli_policy_trace_not_trace PROPERTIES DEPENDS cli_run_closed_form)
# trace and model both refuse a trace of 16-token blocks in a run of 32-token ones
foreach(policy trace model)
  ks_cli_test(policy_${policy}_block_size --exit 1 --stdout-empty
              --stderr-has "small.h5: its block size (16 tokens) differs from cache.block_size (32)"
              -- run ${ks_pol} --set sparse.policy=${policy} --set sparse.file=${ks_trace_dir}/small.h5
              --set sparse.fit=${ks_trace_dir}/small.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/policy_bad.h5)
  set_tests_properties(cli_policy_${policy}_block_size PROPERTIES FIXTURES_REQUIRED trace_cli_files)
endforeach()
# trace record follows the scenario's sparse.preset; --preset wins over it
add_test(NAME trace_preset COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/trace_preset.sh $<TARGET_FILE:kvstrata> ${ks_pol})
set_tests_properties(trace_preset PROPERTIES TIMEOUT 300)
ks_cli_test(trace_record_needs_output --exit 2 --stdout-empty --stderr-has "-o TRACE.h5" -- trace record ${ks_pol})
# cache.evict as a Lua function: LRU written in Lua equals the built-in lru
add_test(NAME policy_lua_lru_is_lru COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/same_summary.sh $<TARGET_FILE:kvstrata>
         ${PROJECT_SOURCE_DIR}/tests/scenarios/lua_lru.lua -- ${ks_pol} --set sparse.policy=random --set cache.evict=lru)
ks_cli_test(policy_lua_bad --exit 1 --stdout-empty --stderr-has "cache.evict (Lua): the function returned a string"
            -- run ${PROJECT_SOURCE_DIR}/tests/scenarios/lua_bad.lua -o ${CMAKE_CURRENT_BINARY_DIR}/lua_bad.h5)
ks_cli_test(policy_lua_named --exit 2 --stdout-empty --stderr-has "a Lua policy is a function"
            -- run ${ks_pol} --set "cache.evict=lua function")
ks_cli_test(bench_cache_lua --json --is policy lua --gt accesses_per_s 0
            -- bench cache --blocks 20000 --topk 32 --steps 500 --lua ${PROJECT_SOURCE_DIR}/tests/scenarios/lua_lru_policy.lua --json)
# the prefetch rule as a Lua function: a constant 4 equals prefetch_window = 4
# (and differs from no prefetch: prefetch_accuracy 0.136 against 0)
add_test(NAME policy_lua_prefetch_is_window COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/same_summary.sh $<TARGET_FILE:kvstrata>
         ${PROJECT_SOURCE_DIR}/tests/scenarios/lua_prefetch.lua -- ${ks_pol} --set sparse.policy=random
         --set sparse.budget_tokens=256 --set cache.prefetch_window=4)
ks_cli_test(policy_lua_prefetch_prefetches --json --gt prefetch_accuracy 0.05
            -- run ${PROJECT_SOURCE_DIR}/tests/scenarios/lua_prefetch.lua -o ${CMAKE_CURRENT_BINARY_DIR}/lua_prefetch.h5 --json)

# the network topologies the platform does not model are refused by name
ks_cli_test(scenario_topology_refused --exit 2 --stdout-empty --stderr-has "platform.network.topology"
            --stderr-has "fat_tree"
            -- run ${PROJECT_SOURCE_DIR}/scenarios/default.lua --set platform.network.topology=torus
            -o ${CMAKE_CURRENT_BINARY_DIR}/topology_bad.h5)
# a trace's kernel times are charged only when replaying one
ks_cli_test(policy_kernel_time_needs_trace --exit 2 --stdout-empty --stderr-has "sparse.kernel_time"
            --stderr-has "needs sparse.policy = \"trace\""
            -- run ${ks_pol} --set sparse.kernel_time=trace -o ${CMAKE_CURRENT_BINARY_DIR}/policy_kt.h5)
# the synthetic attention's locality is tunable between the presets: a
# topic that changes more often lowers R(1); a value past synth.h's bound is
# refused at its key
add_test(NAME trace_topic_switch
  COMMAND sh -c "set -e; for t in 0.002 0.9; do \"$1\" trace record \"$2\" --requests 2 --steps 32 \
--set sparse.topic_switch=$t -o ts_$t.h5 > /dev/null; \"$1\" trace stats ts_$t.h5 --json > ts_$t.json; done; \
jq -e -n --slurpfile a ts_0.002.json --slurpfile b ts_0.9.json '$b[0].reuse_1 < $a[0].reuse_1 - 0.1' > /dev/null; \
h5dump -a /source ts_0.9.h5 | grep -q 'topic_switch 0.9,'; \
! \"$1\" run \"$2\" --set sparse.topic_switch=0.99 -o ts_bad.h5 > /dev/null 2> ts_bad.err; \
grep -q 'sparse.topic_switch: must be at most' ts_bad.err; [ ! -e ts_bad.h5 ]"
  sh $<TARGET_FILE:kvstrata> ${PROJECT_SOURCE_DIR}/tests/scenarios/policies.lua)
set_tests_properties(trace_topic_switch PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
