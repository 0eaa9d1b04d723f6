# Simulator support modules: histograms, HDF5 result files, the SimGrid platform.
ks_add_test(sim_hist test_hist.c)
target_link_libraries(sim_hist PRIVATE ks_base)
ks_add_test(sim_results test_results.c)
target_link_libraries(sim_results PRIVATE ks_results)
ks_add_test(sim_platform test_platform.c)
target_link_libraries(sim_platform PRIVATE ks_engine)
ks_add_test(sim_positional test_positional.c)
target_link_libraries(sim_positional PRIVATE ks_workload)
ks_add_test(sim_workload test_workload.c)
target_link_libraries(sim_workload PRIVATE ks_workload ks_scenario)
target_compile_definitions(sim_workload PRIVATE KS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# The simulation: closed forms, determinism, no result file on failure.
set(ks_ts ${PROJECT_SOURCE_DIR}/tests/scenarios)
# 32 layers x 8 heads x 128 x 2 x 2 B x 4096 tokens at 2 TB/s: 268.435456 us per token, within 1e-6
ks_cli_test(run_closed_form --json --ge tpot_mean 2.68435187e-4 --le tpot_mean 2.68435725e-4
            --ge tpot_p99 2.68435187e-4 --le tpot_p99 2.68435725e-4 --ge hit_rate_l1 1 --ge requests_finished 1
            --le stall_fraction 0 -- run ${ks_ts}/closed_form.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form.h5 --json)
ks_cli_test(run_help --stdout-has "Usage: kvstrata run SCENARIO.lua" --stdout-has "--output" -- run --help)
ks_cli_test(run_bad --exit 2 --stdout-empty --stderr-has "cache.block_size"
            -- run ${ks_ts}/closed_form.lua --set cache.block_size=-3)
add_test(NAME run_twice COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_twice.sh $<TARGET_FILE:kvstrata>
         ${PROJECT_SOURCE_DIR}/scenarios/default.lua --set duration=2s)
set_tests_properties(run_twice PROPERTIES TIMEOUT 300)
# a miss: demotion then promotion, one 128 KiB block each over 50 GB/s + 1 us: 7.244928 us a token
ks_cli_test(run_closed_form_miss --json --ge tpot_mean 7.24492e-6 --le tpot_mean 7.244936e-6 --ge hit_rate_l2 1
            --ge migrated_bytes_l2_l1 131072 --le migrated_bytes_l2_l1 131072
            -- run ${ks_ts}/closed_form_miss.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form_miss.h5 --json)
# the same miss on a host that wakes an idle thread in 10 us: a lane wakes for the batch, the decode
# loop after it lands: 7.244928 + 2 x 10 = 27.244928 us
ks_cli_test(run_closed_form_wake --json --ge tpot_mean 2.724492e-5 --le tpot_mean 2.7244936e-5
            -- run ${ks_ts}/closed_form_wake.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form_wake.h5 --json)
# two GPUs behind one switch uplink, missing at once: the bandwidth term doubles (12.487808 us)
ks_cli_test(run_closed_form_shared_uplink --json --ge tpot_mean 12.48779e-6 --le tpot_mean 12.48782e-6
            --ge requests_finished 2
            -- run ${ks_ts}/closed_form_miss.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form_shared.h5 --json
            --set platform.gpus_per_node=2 --set platform.gpus_per_switch=2 --set workload.arrival.concurrency=2
            --set workload.requests=2)
# the same two GPUs behind separate switches: each as fast as alone
ks_cli_test(run_closed_form_own_uplink --json --ge tpot_mean 7.24492e-6 --le tpot_mean 7.244936e-6
            -- run ${ks_ts}/closed_form_miss.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form_own.h5 --json
            --set platform.gpus_per_node=2 --set platform.gpus_per_switch=1 --set workload.arrival.concurrency=2
            --set workload.requests=2)
# ... and with a host memory of 50 GB/s, less than the two links' 100: the
# two GPUs share it and the bandwidth term doubles as behind one uplink
ks_cli_test(run_closed_form_dram_shared --json --ge tpot_mean 12.48779e-6 --le tpot_mean 12.48782e-6
            --ge requests_finished 2
            -- run ${ks_ts}/closed_form_miss.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form_dram.h5 --json
            --set platform.gpus_per_node=2 --set platform.gpus_per_switch=1 --set workload.arrival.concurrency=2
            --set workload.requests=2 --set platform.dram_bw=50GBps)
# host memory carries every byte a device moves to or from it (dram_check.sh):
# L1 <-> L2 <-> L3 on an SSD (with its op time), a prefill pool, a remote L3
add_test(NAME run_dram_ssd COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/dram_check.sh $<TARGET_FILE:kvstrata>
         ${PROJECT_SOURCE_DIR}/scenarios/validation/ssd_bound.lua)
add_test(NAME run_dram_pool COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/dram_check.sh $<TARGET_FILE:kvstrata>
         ${PROJECT_SOURCE_DIR}/scenarios/default.lua --set duration=5s --set workload.arrival.rate=40
         --set cache.l1=20GB --set prefill.mode=disaggregated --set prefill.gpus=64)
add_test(NAME run_dram_remote COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/dram_check.sh $<TARGET_FILE:kvstrata>
         ${PROJECT_SOURCE_DIR}/scenarios/default.lua --set duration=10s --set workload.arrival.rate=40
         --set cache.l1=30% --set cache.l2=0.5% --set cache.l3=remote --set platform.remote.bw=25GBps
         --set platform.remote.lat=10us --set platform.remote.bytes=10TB)
# golden summaries, fixed seeds: any change of behaviour shows as a diff.
# tiered: L1 under pressure, prompts prefilled by a pool and promoted from L2
add_test(NAME run_golden_default COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/golden.sh $<TARGET_FILE:kvstrata>
         ${CMAKE_CURRENT_SOURCE_DIR}/golden/default_10s.json ${PROJECT_SOURCE_DIR}/scenarios/default.lua
         --set duration=10s)
add_test(NAME run_golden_tiered COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/golden.sh $<TARGET_FILE:kvstrata>
         ${CMAKE_CURRENT_SOURCE_DIR}/golden/tiered_5s.json ${PROJECT_SOURCE_DIR}/scenarios/default.lua
         --set duration=5s --set workload.arrival.rate=40 --set cache.l1=20GB
         --set prefill.mode=disaggregated --set prefill.gpus=64)

# host costs: scheduling (10 us) and one pointer-table rebuild (5 us: the
# prompt's placement changed L1) add to the closed form: 283.435456 us
ks_cli_test(run_closed_form_host --json --ge tpot_mean 2.83435172e-4 --le tpot_mean 2.8343574e-4
            --ge table_rebuilds 1 --le table_rebuilds 1
            -- run ${ks_ts}/closed_form.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form_host.h5 --json
            --set platform.sched_overhead=10us --set platform.table_rebuild=5us)
# prefill, no weights: causal attention 4 x 32 layers x 32 heads x 128 x
# 4095 x 4096 / 2 = 4.39697e12 FLOP at 990 TFLOP/s: TTFT 4.441386636 ms, the
# same whole (chunk 0) or in chunks of 1000 tokens (the chunks' FLOPs sum to
# the whole's)
ks_cli_test(run_closed_form_prefill --json --ge ttft_mean 4.44138219e-3 --le ttft_mean 4.44139108e-3
            -- run ${ks_ts}/closed_form.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form_prefill.h5 --json
            --set prefill.chunk=0)
ks_cli_test(run_closed_form_prefill_chunked --json --ge ttft_mean 4.44138219e-3 --le ttft_mean 4.44139108e-3
            -- run ${ks_ts}/closed_form.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form_chunked.h5 --json
            --set prefill.chunk=1000)
# with 2 GB of weights (1e9 parameters) the linear term 2 x 1e9 x 4095 adds: 12.714113908 ms
ks_cli_test(run_closed_form_prefill_weights --json --ge ttft_mean 1.27141012e-2 --le ttft_mean 1.27141266e-2
            -- run ${ks_ts}/closed_form.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form_weights.h5 --json
            --set model.weight_bytes=2GB)
# disaggregated: the pool prefills (4.441387 ms), then sends the prompt's
# 536,739,840 bytes of KV over its link, the core and the node's NIC (25 GB/s,
# 2 x 5 us): TTFT 25.920980236 ms; every byte shows on those links
ks_cli_test(run_closed_form_disaggregated --json --ge ttft_mean 2.59209543e-2 --le ttft_mean 2.59210062e-2
            --ge kv_sent_bytes 536739840 --le kv_sent_bytes 536739840 --ge requests_finished 1
            -- run ${ks_ts}/closed_form.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form_disagg.h5 --json
            --set prefill.mode=disaggregated)
add_test(NAME run_links COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/links_check.sh $<TARGET_FILE:kvstrata>
         ${ks_ts}/closed_form.lua --set prefill.mode=disaggregated)
# multi-turn sessions: a turn waits for its previous turn's end plus think time
add_test(NAME run_sessions COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/sessions_check.sh $<TARGET_FILE:kvstrata> 5
         ${PROJECT_SOURCE_DIR}/scenarios/dialogue_multiturn.lua --set duration=30s)
set_tests_properties(run_sessions PROPERTIES TIMEOUT 300)
ks_cli_test(run_bad_q_heads --exit 2 --stdout-empty --stderr-has "model.q_heads"
            -- run ${ks_ts}/closed_form.lua --set model.q_heads=12)
ks_add_test(sim_trace test_trace.c)
target_link_libraries(sim_trace PRIVATE ks_workload)
# a measured kernel-time table replaces the KV term: k us per layer for k
# blocks, 128 blocks x 32 layers = 4.096 ms a token; batch 2 in the table halves it
ks_cli_test(run_closed_form_kernel_time --json --ge tpot_mean 4.0959959e-3 --le tpot_mean 4.0960041e-3
            -- run ${ks_ts}/closed_form_kernel.lua -o ${CMAKE_CURRENT_BINARY_DIR}/closed_form_kernel.h5 --json)
ks_cli_test(run_bad_kernel_time --exit 2 --stdout-empty --stderr-has "kernel_time.blocks"
            --stderr-has "bad_kernel_time.lua"
            -- run ${ks_ts}/bad_kernel_time.lua -o ${CMAKE_CURRENT_BINARY_DIR}/bad_kernel_time.h5)
# L3 capacity from the drives: 1 MiB on one drive, one GPU: 8 pages of 128 KiB in /tiers
add_test(NAME run_ssd_capacity COMMAND sh -c
         "$<TARGET_FILE:kvstrata> run ${ks_ts}/closed_form.lua --set cache.l3=ssd --set platform.ssd.bytes=1MiB -o ${CMAKE_CURRENT_BINARY_DIR}/ssd_bytes.h5 > /dev/null && ${CMAKE_CURRENT_SOURCE_DIR}/h5_rows.sh ${CMAKE_CURRENT_BINARY_DIR}/ssd_bytes.h5 /tiers | awk -F, '$2 == 2 { n++; ok = $3 == 8 } END { exit !(n == 1 && ok) }'")
# plan: bisection for the smallest HBM bandwidth with P99 TPOT <= 1 ms: at
# least 536.870912 GB/s (the closed form), within the 2% tolerance above it
ks_cli_test(plan_closed_form --json --ge answer 5.36870912e11 --le answer 5.476e11 --has points --is goal smallest
            -- plan ${ks_ts}/plan_hbm.lua -o ${CMAKE_CURRENT_BINARY_DIR}/plan_hbm --json)
ks_cli_test(plan_bad --exit 2 --stdout-empty --stderr-has "search" -- plan ${ks_ts}/closed_form.lua)
