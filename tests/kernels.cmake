# The attention kernels: the C references against double-precision
# attention and brute force, and the CUDA kernels against the references
# (kernel_cuda exits KS_TEST_SKIP where no GPU answers). Each test includes
# the shared fixture kernel_fixture.h; they link the kernel libraries
# only, not the cache manager.
function(ks_add_kernel_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE ks_kernels ks_ref PkgConfig::CMOCKA m)
  target_compile_definitions(${name} PRIVATE KS_TEST_SKIP_CODE=${KS_TEST_SKIP})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 600)
endfunction()

ks_add_kernel_test(kernel_half test_kernel_half.c)
ks_add_kernel_test(kernel_summary test_kernel_summary.c)
ks_add_kernel_test(kernel_select test_kernel_select.c)
ks_add_kernel_test(kernel_decode test_kernel_decode.c)
ks_add_kernel_test(kernel_int8 test_kernel_int8.c)
ks_add_kernel_test(kernel_cuda test_kernel_cuda.c)
