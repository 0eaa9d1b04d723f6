# Unit tests of the helpers every library uses (sim/base), one executable
# each: base.<module>.
# arrays grown by doubling, and freed indices taken again, the last freed first
ks_add_test(base.grow test_grow.c)
target_link_libraries(base_grow PRIVATE ks_base)

ks_add_test(base.heap test_heap.c)
target_link_libraries(base_heap PRIVATE ks_base)

# the radix sort by a 32-bit key: the order of a stable sort
ks_add_test(base.sort test_sort.c)
target_link_libraries(base_sort PRIVATE ks_base)

# division by a magic number: the hardware's, exactly
ks_add_test(base.fastdiv test_fastdiv.c)
target_link_libraries(base_fastdiv PRIVATE ks_base)

ks_add_test(base.atomicfile test_atomicfile.c)
target_link_libraries(base_atomicfile PRIVATE ks_base)
target_compile_definitions(base_atomicfile PRIVATE KS_TEST_BINARY_DIR="${CMAKE_CURRENT_BINARY_DIR}")

ks_add_test(base.fs test_fs.c)
target_link_libraries(base_fs PRIVATE ks_base)
target_compile_definitions(base_fs PRIVATE KS_TEST_BINARY_DIR="${CMAKE_CURRENT_BINARY_DIR}")

ks_add_test(base.clock test_clock.c)
target_link_libraries(base_clock PRIVATE ks_base)

ks_add_test(base.cmdline test_cmdline.c)
target_link_libraries(base_cmdline PRIVATE ks_base)

# histograms: exact moments, bounded quantile error, merging
ks_add_test(base.hist test_hist.c)
target_link_libraries(base_hist PRIVATE ks_base)

# reserved arrays: committed as written, huge pages only past the dense size
ks_add_test(base.bigmem test_bigmem.c)
target_link_libraries(base_bigmem PRIVATE ks_base)
# the worker pool: each job runs once, by a worker or by its waiter
ks_add_test(base.pool test_pool.c)
target_link_libraries(base_pool PRIVATE ks_base)
ks_tsan_test(base.pool)
set_tests_properties(base.pool PROPERTIES TIMEOUT 60) # a waiter that did not help would hang
