# Helpers for every library's tests (tests/<lib>/<lib>.cmake), and the
# fixtures several of them share. A C unit test tests/<lib>/test_<module>.c
# is the test <lib>.<module>, built as the target <lib>_<module>.
set(KS_TEST_SKIP 77)
set(ks_tests_dir ${CMAKE_CURRENT_LIST_DIR})

# Shared fixtures: tests/fixtures/ (scenarios, data, golden summaries, the
# unit tests' headers) and the shipped scenarios.
set(ks_fixtures ${ks_tests_dir}/fixtures)
set(ks_ts ${ks_fixtures}/scenarios)
set(ks_sc ${PROJECT_SOURCE_DIR}/scenarios)
# tests/fixtures/scenarios/policies.lua: one GPU, 4 layers, 4K prompts, L1 of
# 40 MB (a third of the batch's blocks); the selection policies' runs
# (workload), Lua policies (scenario) and traces (trace) use it.
set(ks_pol ${ks_ts}/policies.lua)
# A small random trace and a copy cut in half, which trace_cli_fixture
# (trace.cmake, fixture trace_cli_files) writes; trace and workload tests read them.
set(ks_trace_dir ${CMAKE_CURRENT_BINARY_DIR}/trace_cli)
file(MAKE_DIRECTORY ${ks_trace_dir})

# ks_test_sources(VAR SOURCES...): SOURCES with a relative path taken from
# the folder of the .cmake file that calls the helper.
function(ks_test_sources var)
  set(out "")
  foreach(src IN LISTS ARGN)
    if(NOT IS_ABSOLUTE ${src})
      set(src ${CMAKE_CURRENT_LIST_DIR}/${src})
    endif()
    list(APPEND out ${src})
  endforeach()
  set(${var} ${out} PARENT_SCOPE)
endfunction()

# ks_add_test(LIB.MODULE SOURCES...) builds a cmocka test linked to the cache
# library as the target LIB_MODULE and registers it as the test LIB.MODULE.
# Shared helpers: tests/fixtures/unit_util.h.
function(ks_add_test name)
  string(REPLACE "." "_" target ${name})
  ks_test_sources(srcs ${ARGN})
  add_executable(${target} ${srcs})
  target_link_libraries(${target} PRIVATE ks_cache PkgConfig::CMOCKA)
  target_include_directories(${target} PRIVATE ${ks_fixtures})
  add_test(NAME ${name} COMMAND ${target})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 600)
  ks_kind(unit ${name})
endfunction()

# ks_add_kernel_test(kernels.MODULE SOURCES...): a kernel test, as
# ks_add_test but linked to the kernel libraries only, not the cache manager;
# it includes the shared fixture tests/fixtures/kernel_fixture.h.
function(ks_add_kernel_test name)
  string(REPLACE "." "_" target ${name})
  ks_test_sources(srcs ${ARGN})
  add_executable(${target} ${srcs})
  target_link_libraries(${target} PRIVATE ks_kernels ks_ref PkgConfig::CMOCKA m)
  target_include_directories(${target} PRIVATE ${ks_fixtures})
  target_compile_definitions(${target} PRIVATE KS_TEST_SKIP_CODE=${KS_TEST_SKIP})
  add_test(NAME ${name} COMMAND ${target})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 600)
  ks_kind(unit ${name})
endfunction()

# ks_tsan_test(NAME [TARGETS...]) adds test NAME to the tests that matter for
# threads: label `tsan`, and the target tsan_tests builds what it needs (the
# target of the C unit test NAME, LIB.MODULE -> LIB_MODULE, if there is one,
# and TARGETS). .ci/run builds only tsan_tests under ThreadSanitizer and runs
# `ctest -L tsan`; a whole suite under TSan would be slow. Call it after the
# test (and its targets) are defined.
add_custom_target(tsan_tests)
function(ks_tsan_test name)
  set_property(TEST ${name} APPEND PROPERTY LABELS tsan)
  string(REPLACE "." "_" target ${name})
  if(TARGET ${target})
    add_dependencies(tsan_tests ${target})
  endif()
  foreach(t IN LISTS ARGN)
    add_dependencies(tsan_tests ${t})
  endforeach()
endfunction()

# test_cli (tests/cli/test_cli.c) runs one kvstrata command line under the
# checks it is given: exit status, stdout and stderr, and the figures of
# --json output (see test_cli.c for the checks).
add_executable(test_cli ${ks_tests_dir}/cli/test_cli.c)
target_link_libraries(test_cli PRIVATE PkgConfig::JANSSON)

# ks_cli_test(NAME CHECKS... -- ARGS...): the test cli_NAME runs
# `kvstrata ARGS...` under test_cli with CHECKS.
function(ks_cli_test name)
  list(FIND ARGN "--" dash)
  if(dash LESS 0)
    message(FATAL_ERROR "ks_cli_test(${name}): no -- before the command's arguments")
  endif()
  list(SUBLIST ARGN 0 ${dash} checks)
  set(args "")
  math(EXPR first "${dash} + 1")
  list(LENGTH ARGN n)
  if(first LESS n)
    list(SUBLIST ARGN ${first} -1 args)
  endif()
  add_test(NAME cli_${name} COMMAND test_cli ${checks} -- $<TARGET_FILE:kvstrata> ${args})
  set_tests_properties(cli_${name} PROPERTIES TIMEOUT 300)
  ks_kind(contract cli_${name})
endfunction()

# Qualitative checks, two runs each: ks_compare(NAME KEY OP FACTOR -- A -- B)
# checks A's KEY OP FACTOR x B's KEY (compare_runs.sh KVSTRATA KEY OP FACTOR -- A -- B).
function(ks_compare name key op factor)
  add_test(NAME ${name} COMMAND ${ks_tests_dir}/compare_runs.sh $<TARGET_FILE:kvstrata>
           ${key} ${op} ${factor} ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300)
endfunction()
