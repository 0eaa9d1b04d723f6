# Unit tests of the helpers every library uses (sim/base), one executable
# each, named base_<module>; label `base`.
ks_add_test(base_heap ${CMAKE_CURRENT_LIST_DIR}/test_heap.c)
target_link_libraries(base_heap PRIVATE ks_base)
set_property(TEST base_heap APPEND PROPERTY LABELS base)

ks_add_test(base_atomicfile ${CMAKE_CURRENT_LIST_DIR}/test_atomicfile.c)
target_link_libraries(base_atomicfile PRIVATE ks_base)
target_compile_definitions(base_atomicfile PRIVATE KS_TEST_BINARY_DIR="${CMAKE_CURRENT_BINARY_DIR}")
set_property(TEST base_atomicfile APPEND PROPERTY LABELS base)

ks_add_test(base_fs ${CMAKE_CURRENT_LIST_DIR}/test_fs.c)
target_link_libraries(base_fs PRIVATE ks_base)
target_compile_definitions(base_fs PRIVATE KS_TEST_BINARY_DIR="${CMAKE_CURRENT_BINARY_DIR}")
set_property(TEST base_fs APPEND PROPERTY LABELS base)

ks_add_test(base_clock ${CMAKE_CURRENT_LIST_DIR}/test_clock.c)
target_link_libraries(base_clock PRIVATE ks_base)
set_property(TEST base_clock APPEND PROPERTY LABELS base)

ks_add_test(base_cmdline ${CMAKE_CURRENT_LIST_DIR}/test_cmdline.c)
target_link_libraries(base_cmdline PRIVATE ks_base)
set_property(TEST base_cmdline APPEND PROPERTY LABELS base)
