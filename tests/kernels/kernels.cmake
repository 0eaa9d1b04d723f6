# The attention kernels (kernels/): the C references against double-precision
# attention and brute force, and the CUDA kernels against the references
# (kernels.cuda exits KS_TEST_SKIP where no GPU answers). Each test includes
# the shared fixture tests/fixtures/kernel_fixture.h; they link the kernel
# libraries only, not the cache manager (ks_add_kernel_test, helpers.cmake).
ks_add_kernel_test(kernels.half test_kernel_half.c)
ks_add_kernel_test(kernels.summary test_kernel_summary.c)
ks_add_kernel_test(kernels.select test_kernel_select.c)
ks_add_kernel_test(kernels.decode test_kernel_decode.c)
ks_add_kernel_test(kernels.int8 test_kernel_int8.c)
ks_add_kernel_test(kernels.cuda test_kernel_cuda.c)
