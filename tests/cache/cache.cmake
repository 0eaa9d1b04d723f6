# The cache manager (sim/cache): unit tests of its modules (cmocka), one
# executable each, cache.<module>; shared helpers: tests/fixtures/unit_util.h.
ks_add_test(cache.heat test_heat.c)
ks_add_test(cache.blocktab test_blocktab.c)
ks_add_test(cache.tier test_tier.c)
ks_add_test(cache.seqmap test_seqmap.c)
ks_add_test(cache.requests test_requests.c)
ks_add_test(cache.evict test_evict.c)
ks_add_test(cache.prefetch test_prefetch.c)
target_link_libraries(cache_prefetch PRIVATE ks_step)
ks_add_test(cache.plan test_plan.c)
ks_add_test(cache.generation test_generation.c)
ks_add_test(cache.shared test_shared.c)

# The cache manager as a whole: randomized operations with the invariant
# checker, and Belady as the bound of every policy.
ks_add_test(cache.random test_random.c)
ks_add_test(cache.policy_bound test_policy_bound.c)
ks_add_test(cache.check test_check.c)

ks_add_test(cache.reserve test_reserve.c)
# a tally (the followers' cache in time) against the per-block manager
ks_add_test(cache.tally test_tally.c)
ks_add_test(cache.buffer test_buffer.c)
# the wide forms (AVX-512) against the plain ones
ks_add_test(cache.wide test_wide.c)
# accesses accounted in aggregate against the same history block by block
ks_add_test(cache.aggregate test_aggregate.c)
# selections deferred against the same history drawn in their steps
ks_add_test(cache.defer test_defer.c)

# `kvstrata bench cache --check`: the invariant checker passes under every
# policy, with every tier full (no block can move: misses stay unplanned),
# with room (blocks really move) and with exact victim scans
foreach(policy heat lru lfu belady)
  ks_cli_test(check_${policy}_full --json --is policy ${policy} --gt misses_unplanned 0 --le migrated_l3_l1 0
              -- bench cache --blocks 4000 --topk 32 --steps 2500 --policy ${policy} --l2 0.25 --l3 0.6875
              --check --json)
  ks_cli_test(check_${policy} --json --is policy ${policy} --gt migrated_l3_l1 0
              -- bench cache --blocks 4000 --topk 32 --steps 2500 --policy ${policy} --check --json)
  ks_cli_test(check_${policy}_exact --json --is policy ${policy} --gt migrated_l3_l1 0
              -- bench cache --blocks 4000 --topk 32 --steps 2500 --policy ${policy} --samples 0
              --check --json)
endforeach()

# README "Sampled eviction against the exact scan", the row "bench stream, 100000 blocks" (0.979,
# 0.950 / 0.955, 0.958 / 0.957, 0.927 / 0.940), made by "`bench cache --blocks 100000 --topk 64
# --steps 20000 --samples 0|5`": each policy's L1 hit rate exact (--samples 0) and sampled
# (--samples 5) to the README's 3 decimals (+- 0.0005); belady never samples
set(ks_stream_row --blocks 100000 --topk 64 --steps 20000 --json)
ks_cli_test(bench_readme_stream_belady --json --is policy belady --ge hit_rate_l1 0.9785 --le hit_rate_l1 0.9795
            -- bench cache ${ks_stream_row} --policy belady --samples 0)
foreach(row "heat;0;0.9495;0.9505" "heat;5;0.9545;0.9555" "lru;0;0.9575;0.9585" "lru;5;0.9565;0.9575"
            "lfu;0;0.9265;0.9275" "lfu;5;0.9395;0.9405")
  list(GET row 0 policy)
  list(GET row 1 samples)
  list(GET row 2 lo)
  list(GET row 3 hi)
  ks_cli_test(bench_readme_stream_${policy}_samples${samples} --json --is policy ${policy}
              --eq samples ${samples} --ge hit_rate_l1 ${lo} --le hit_rate_l1 ${hi}
              -- bench cache ${ks_stream_row} --policy ${policy} --samples ${samples})
endforeach()
