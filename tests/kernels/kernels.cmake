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
ks_gpu_tests(kernels.cuda)
# The wide decode kernel's arithmetic (kernels/decode_wide.h) on the host:
# conversions, chunk walk, and a model of the kernel against the reference.
ks_add_kernel_test(kernels.wide test_kernel_wide.c)
# The wide decode kernel's hot loop reads K and V with 16-byte loads: its PTX
# (sm_90, built here as an object of its own) has ld.global[.nc].v4 inside a
# loop; the same check on the scalar attend_kernel must find none (it reads
# two bytes at a time), which shows the check can fail.
if(KS_HAVE_CUDA)
  add_library(kernels_ptx OBJECT ${PROJECT_SOURCE_DIR}/kernels/decode_wide_cuda.cu
    ${PROJECT_SOURCE_DIR}/kernels/decode_cuda.cu)
  set_target_properties(kernels_ptx PROPERTIES CUDA_PTX_COMPILATION ON CUDA_ARCHITECTURES 90)
  target_include_directories(kernels_ptx PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
  if(KS_WERROR)
    target_compile_options(kernels_ptx PRIVATE -Werror=all-warnings)
  endif()
  add_test(NAME kernels.ptx_v4 COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/ptx_v4.sh attend_wide_kernel
    $<TARGET_OBJECTS:kernels_ptx>)
  add_test(NAME kernels.ptx_v4_scalar COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/ptx_v4.sh --expect-none 13attend_kernel
    $<TARGET_OBJECTS:kernels_ptx>)
endif()
# kernels/device_check.sh's flow on this machine, where no GPU answers: the
# bundle, the order of the steps, the files and the summary it would bring
# back from a lent GPU (issue 22). Plain builds only: a sanitized bundle is
# not what goes to the GPU.
if(TARGET kvstrata-device AND TARGET kernels_cuda AND NOT KS_SANITIZE_ADDRESS AND NOT KS_SANITIZE_THREAD)
  add_test(NAME device_check_flow COMMAND ${CMAKE_CURRENT_LIST_DIR}/device_check_flow.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(device_check_flow PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS kernels)
endif()
