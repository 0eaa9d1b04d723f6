# The cache manager as a whole: randomized operations with the invariant
# checker, and Belady as the bound of every policy.

ks_add_test(cache_random test_random.c)
ks_add_test(cache_policy_bound test_policy_bound.c)
ks_add_test(cache_check test_check.c)

ks_add_test(cache_reserve test_reserve.c)
