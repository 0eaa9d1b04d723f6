# The libFuzzer targets (KS_FUZZ, top-level CMakeLists.txt): one per reader
# of untrusted input. tests/fuzz/run.sh builds them in their own tree with
# clang and runs each on a copy of its seed corpus.
#
#   fuzz_scenario  the scenario loader: Lua source, or --set strings on base.lua
#   fuzz_trace     the trace reader (ks_trace_load)
#   fuzz_result    the result reader of `kvstrata report` (ks_report_write, gnuplot replaced by `true`)
foreach(t scenario trace result)
  add_executable(fuzz_${t} ${CMAKE_CURRENT_LIST_DIR}/fuzz_${t}.c)
  target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
endforeach()
target_link_libraries(fuzz_scenario PRIVATE ks_scenario)
target_compile_definitions(fuzz_scenario PRIVATE KS_FUZZ_BASE="${PROJECT_SOURCE_DIR}/tests/fixtures/scenarios/base.lua")
target_link_libraries(fuzz_trace PRIVATE ks_trace)
target_link_libraries(fuzz_result PRIVATE ks_study)
