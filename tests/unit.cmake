# Unit tests of the cache manager's modules (cmocka), one executable each,
# named unit_<module>. Shared helpers: unit_util.h.
ks_add_test(unit_heat test_heat.c)
ks_add_test(unit_blocktab test_blocktab.c)
ks_add_test(unit_tier test_tier.c)
ks_add_test(unit_seqmap test_seqmap.c)
ks_add_test(unit_requests test_requests.c)
ks_add_test(unit_evict test_evict.c)
ks_add_test(unit_prefetch test_prefetch.c)
ks_add_test(unit_plan test_plan.c)
ks_add_test(unit_generation test_generation.c)
ks_add_test(unit_shared test_shared.c)
ks_add_test(unit_synth test_synth.c)
target_link_libraries(unit_synth PRIVATE ks_sim)
