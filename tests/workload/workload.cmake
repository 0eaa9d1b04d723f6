# What the GPUs are asked to do (sim/workload): the request stream, sparse
# block selection, synthetic attention, the access model fitted to traces;
# and the selection policies in kvstrata run: synthetic attention through the
# scoring kernel (topk, retrieval, mixed), trace record and replay, on
# tests/fixtures/scenarios/policies.lua (${ks_pol}, helpers.cmake).
ks_add_test(workload.positional test_positional.c)
target_link_libraries(workload_positional PRIVATE ks_workload)
ks_add_test(workload.workload test_workload.c)
target_link_libraries(workload_workload PRIVATE ks_workload ks_scenario)
target_compile_definitions(workload_workload PRIVATE KS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# the whole Azure trace (tests/fixtures/data): its own test
add_test(NAME workload.full_trace COMMAND workload_workload full_trace)
set_tests_properties(workload.full_trace PROPERTIES TIMEOUT 600)
ks_kind(unit workload.full_trace)
ks_add_test(workload.synth test_synth.c)
target_link_libraries(workload_synth PRIVATE ks_workload)
ks_add_test(workload.accessmodel test_accessmodel.c)
target_link_libraries(workload_accessmodel PRIVATE ks_workload)
# the generator draws exactly the selections of the model's definition (a
# reference written plainly, with sorts), bit for bit over seeds, layer kinds,
# horizons and context schedules
ks_add_test(workload.accessmodel_ref test_accessmodel_ref.c)
target_link_libraries(workload_accessmodel_ref PRIVATE ks_workload)
target_compile_definitions(workload_accessmodel_ref PRIVATE KS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# the dsa policy's model: closed forms (no noise: overlap 1; noise alone: k / N),
# determinism, the layers' correlation lambda (0: the model before it, bit for bit; > 0: each
# layer's consecutive overlap kept, adjacent layers' raised, a subset of layers drawn as the
# full model has them), the layer mapping by relative depth, the cost of a selection
ks_add_test(workload.dsa test_dsa.c)
target_link_libraries(workload_dsa PRIVATE ks_workload)
# its passes over a layer's units: the draw's plain form is the formula, its AVX2 and AVX-512
# forms give its bits over every option, ranges off their blocks and leans ending anywhere; the
# bound's and the threshold's forms keep what the rule keeps, on values with ties and NaNs (a form
# the CPU lacks skips)
ks_add_test(workload.dsa_pass test_dsa_pass.c)
target_link_libraries(workload_dsa_pass PRIVATE ks_workload)
target_compile_definitions(workload_dsa_pass PRIVATE KS_TEST_SKIP_CODE=${KS_TEST_SKIP})
# a dsa trace (selrecord.c) holds, record for record, the selection module's
# dsa selections, and its replay returns them again (1- and 16-token blocks)
# retrieval: the top-k alone (and the partial block), topk with sink and window; mixed: the window
# throughout at switch_prob 0, alternating at 1, 0.25 x steps switches at 0.25
ks_add_test(workload.scored test_scored.c)
target_link_libraries(workload_scored PRIVATE ks_workload ks_scenario)
target_compile_definitions(workload_scored PRIVATE KS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
ks_add_test(workload.selrecord test_selrecord.c)
target_link_libraries(workload_selrecord PRIVATE ks_workload ks_scenario)
target_compile_definitions(workload_selrecord PRIVATE KS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

set(ks_pol_ok --json --ge requests_finished 4 --ge tokens 512 --le tokens 512 --gt hit_rate_l1 0 --le hit_rate_l1 1
    --ge stall_fraction 0 --le stall_fraction 1 --gt migrated_bytes_l2_l1 0)
foreach(policy topk retrieval mixed dsa)
  ks_cli_test(policy_${policy} ${ks_pol_ok}
              -- run ${ks_pol} --set sparse.policy=${policy} -o ${CMAKE_CURRENT_BINARY_DIR}/policy_${policy}.h5 --json)
endforeach()
# the query's motion decides what tiering can do: hit_rate_l1 0.991 (stable)
# against 0.825 (noisy: frequent topic switches and retrieval jumps)
ks_compare(policy_stable_beats_noisy hit_rate_l1 gt 1.1
           -- ${ks_pol} --set sparse.preset=stable -- ${ks_pol} --set sparse.preset=noisy)
add_test(NAME trace_replay COMMAND ${CMAKE_CURRENT_LIST_DIR}/trace_replay.sh $<TARGET_FILE:kvstrata> ${ks_pol})
set_tests_properties(trace_replay PROPERTIES TIMEOUT 600)
# trace record times the decode kernel of each record (--backend ref, auto,
# cuda); a replay charges those times: sim_time moves by the closed form
add_test(NAME trace_kernel_time COMMAND ${CMAKE_CURRENT_LIST_DIR}/trace_kernel_time.sh $<TARGET_FILE:kvstrata>
         ${ks_pol})
set_tests_properties(trace_kernel_time PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 300)
# trace and model both refuse a trace of 16-token blocks in a run of 32-token ones
foreach(policy trace model)
  ks_cli_test(policy_${policy}_block_size --exit 1 --stdout-empty
              --stderr-has "small.h5: its block size (16 tokens) differs from cache.block_size (32)"
              -- run ${ks_pol} --set sparse.policy=${policy} --set sparse.file=${ks_trace_dir}/small.h5
              --set sparse.fit=${ks_trace_dir}/small.h5 -o ${CMAKE_CURRENT_BINARY_DIR}/policy_bad.h5)
  set_tests_properties(cli_policy_${policy}_block_size PROPERTIES FIXTURES_REQUIRED trace_cli_files)
endforeach()
# trace record follows the scenario's sparse.preset; --preset wins over it
add_test(NAME trace_preset COMMAND ${CMAKE_CURRENT_LIST_DIR}/trace_preset.sh $<TARGET_FILE:kvstrata> ${ks_pol})
set_tests_properties(trace_preset PROPERTIES TIMEOUT 300)
ks_cli_test(trace_record_needs_output --exit 2 --stdout-empty --stderr-has "-o TRACE.h5" -- trace record ${ks_pol})
# sparse.policy = "dsa" is recorded from the model (no synthetic attention,
# no kernels): a run replaying the trace is the dsa run, figure for figure,
# and Belady bounds LRU on it in per-request device buffers
add_test(NAME trace_dsa COMMAND ${CMAKE_CURRENT_LIST_DIR}/trace_dsa.sh $<TARGET_FILE:kvstrata>
         ${ks_ts}/dsa_small.lua)
set_tests_properties(trace_dsa PROPERTIES TIMEOUT 300)
# README "Recording the dsa model", on results/published/hisparse_missrate.lua (one request of 128
# steps): "9,984 records and 20.4M selected entries, 80.7 MB on disk"; "Its replay reproduces the
# dsa run's hit_rate_l1 (0.769 with LRU, one request decoding 128 steps); Belady on it hits 0.864",
# each to half a unit of the README's last digit (hisparse_trace_readme.sh). The trace (87 MB) is
# recorded once (about 8 s, 202 MB resident) and removed after; the Belady replay takes about 35 s
# and 3.4 GB resident, trace stats 10 s and 0.75 GB: the lock keeps them from running side by side.
set(ks_hisparse_dir ${CMAKE_CURRENT_BINARY_DIR}/hisparse_trace)
foreach(step record shape lru belady clean)
  add_test(NAME trace_hisparse_readme_${step} COMMAND ${CMAKE_CURRENT_LIST_DIR}/hisparse_trace_readme.sh
           $<TARGET_FILE:kvstrata> ${PROJECT_SOURCE_DIR}/results/published/hisparse_missrate.lua ${ks_hisparse_dir}
           ${step})
  set_tests_properties(trace_hisparse_readme_${step} PROPERTIES TIMEOUT 300)
endforeach()
set_tests_properties(trace_hisparse_readme_record PROPERTIES FIXTURES_SETUP hisparse_trace)
set_tests_properties(trace_hisparse_readme_clean PROPERTIES FIXTURES_CLEANUP hisparse_trace)
set_tests_properties(trace_hisparse_readme_shape trace_hisparse_readme_lru trace_hisparse_readme_belady
                     PROPERTIES FIXTURES_REQUIRED hisparse_trace)
set_tests_properties(trace_hisparse_readme_shape trace_hisparse_readme_belady PROPERTIES RESOURCE_LOCK memory)
set_tests_properties(trace_hisparse_readme_belady PROPERTIES TIMEOUT 600)
# --preset and --backend mean nothing there: refused, nothing written
foreach(opt "--preset;noisy" "--backend;ref")
  list(GET opt 0 name)
  string(REPLACE "--" "" tag ${name})
  ks_cli_test(trace_record_dsa_${tag} --exit 2 --stdout-empty
              --stderr-has "sparse.policy is dsa, whose selections are recorded from its model"
              --stderr-has "${name} does not apply"
              -- trace record ${ks_ts}/dsa_small.lua ${opt} -o ${CMAKE_CURRENT_BINARY_DIR}/dsa_refused.h5)
endforeach()
ks_cli_test(trace_record_help --stdout-has "sparse.policy = \"dsa\"" --stdout-has "kernel_time is -1"
            -- trace record --help)

# the synthetic attention's locality is tunable between the presets: a
# topic that changes more often lowers R(1); a value past synth.h's bound is
# refused at its key
add_test(NAME trace_topic_switch
  COMMAND sh -c "set -e; for t in 0.002 0.9; do \"$1\" trace record \"$2\" --requests 2 --steps 32 \
--set sparse.topic_switch=$t -o ts_$t.h5 > /dev/null; \"$1\" trace stats ts_$t.h5 --json > ts_$t.json; done; \
jq -e -n --slurpfile a ts_0.002.json --slurpfile b ts_0.9.json '$b[0].reuse_1 < $a[0].reuse_1 - 0.1' > /dev/null; \
h5dump -a /source ts_0.9.h5 | grep -q 'topic_switch 0.9,'; \
if \"$1\" run \"$2\" --set sparse.topic_switch=0.99 -o ts_bad.h5 > /dev/null 2> ts_bad.err; then exit 1; fi; \
grep -q 'sparse.topic_switch: must be at most' ts_bad.err; [ ! -e ts_bad.h5 ]"
  sh $<TARGET_FILE:kvstrata> ${ks_pol})
set_tests_properties(trace_topic_switch PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# SIGINT/SIGTERM during trace record: stopped within a layer, exit 1, no file
add_test(NAME workload_record_signal COMMAND ${CMAKE_CURRENT_LIST_DIR}/record_signal.sh $<TARGET_FILE:kvstrata>
         ${ks_ts}/closed_form.lua)
set_tests_properties(workload_record_signal PROPERTIES TIMEOUT 120)

# Kinds (tests/kinds.cmake): a replay's time moved by the kernel times it carries, in closed form
ks_kind(closed_form trace_kernel_time)
