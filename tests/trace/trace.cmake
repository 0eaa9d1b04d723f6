# Access traces (sim/trace): the file format (trace), their statistics
# (tracestats), `kvstrata trace stats`, and traces written by others.
ks_add_test(trace.trace test_trace.c)
target_link_libraries(trace_trace PRIVATE ks_workload)
ks_add_test(trace.tracestats test_tracestats.c)
target_link_libraries(trace_tracestats PRIVATE ks_workload)

# The CLI tests read a small random trace and a copy cut in half
# (${ks_trace_dir}, helpers.cmake), which trace.tracestats writes first.
add_test(NAME trace_cli_fixture COMMAND trace_tracestats --write ${ks_trace_dir}/small.h5 ${ks_trace_dir}/cut.h5)
set_tests_properties(trace_cli_fixture PROPERTIES FIXTURES_SETUP trace_cli_files)

ks_cli_test(trace_stats_json --json --stderr-empty --is file ${ks_trace_dir}/small.h5 --has adjacent
            --ge requests 2 --le requests 2 --ge layers 2 --le layers 2 --ge records 160 --le records 160
            --ge mean_selected 8 --le mean_selected 8
            --gt reuse_1 0.5 --lt reuse_1 1 --gt reuse_4 0.5 --le reuse_4 1 --gt reuse_16 0.5 --le reuse_16 1
            --has reuse_256 --has reuse_distance --has cold --ge neighbour 0 --le neighbour 1 --has neighbour_new
            --gt working_set_16 8 --has working_set_16_series --has working_set_256
            --ge mass_top1 0.125 --le mass_top1 0.125 --ge mass_top8 1 --le mass_total 1.0001
            --ge opt_l1_100pct 16 --le opt_l1_100pct 16 --gt opt_hit_100pct 0.5 --le opt_hit_100pct 1
            --ge opt_hit_200pct 0.5 --has opt_hit_25pct --has per_layer
            -- trace stats ${ks_trace_dir}/small.h5 --json)
ks_cli_test(trace_stats_text --stdout-has "reuse_1" --stdout-has "opt_hit_100pct" --stdout-has "# " --stdout-has "adjacent"
            --stdout-has "reuse distance" --stdout-has "per layer" --stderr-empty
            -- trace stats ${ks_trace_dir}/small.h5)
ks_cli_test(trace_stats_cut --exit 1 --stdout-empty --stderr-has "${ks_trace_dir}/cut.h5:"
            -- trace stats ${ks_trace_dir}/cut.h5 --json)
ks_cli_test(trace_stats_not_hdf5 --exit 1 --stdout-empty --stderr-has "trace.cmake: cannot be opened"
            -- trace stats ${CMAKE_CURRENT_LIST_DIR}/trace.cmake)
# a missing file is said to be missing, not "not HDF5"
ks_cli_test(trace_stats_missing --exit 1 --stdout-empty --stderr-has "${ks_trace_dir}/none.h5: No such file or directory"
            -- trace stats ${ks_trace_dir}/none.h5)
ks_cli_test(trace_model_missing --exit 1 --stdout-empty --stderr-has "${ks_trace_dir}/none.h5: No such file or directory"
            -- trace model ${ks_trace_dir}/none.h5 -o ${ks_trace_dir}/none_model.h5)
ks_cli_test(trace_stats_usage --exit 2 --stdout-empty --stderr-has "TRACE.h5" -- trace stats)
ks_cli_test(trace_stats_help --stdout-has "Usage: kvstrata trace stats TRACE.h5" --stdout-has "reuse_W"
            --stdout-has "layer l-1 also selects at that step" -- trace stats --help)

# The dsa model's adjacent layers overlap as IndexCache measures (70-100% top-k overlap between
# adjacent layers; calib/locality/dsa.lua): a trace recorded from it on DeepSeek-V3.2's 61
# layers (scenarios/deepseek_v3_2_8xh200.lua under sparse.policy dsa, 1-token blocks: top-k 2048
# of 8K tokens; one request, 8 steps, about a second) reports an `adjacent` inside [0.70, 1.00]
# (0.86 here: layers 1 .. 60 pooled, layer 1 with the near-random layer 0 included), null for
# layer 0 and a figure for every other layer
add_test(NAME trace_dsa_adjacent
  COMMAND sh -c "set -e; \"$1\" trace record \"$2\" --set sparse.policy=dsa --set cache.block_size=1 --requests 1 \
--steps 8 -o dsa_adjacent.h5 > /dev/null; \"$1\" trace stats dsa_adjacent.h5 --json > dsa_adjacent.json; rm -f dsa_adjacent.h5; \
jq -e '.adjacent >= 0.70 and .adjacent <= 1 and .per_layer[0].adjacent == null and (.per_layer | length) == 61 \
and all(.per_layer[1:][]; .adjacent > 0 and .adjacent <= 1)' dsa_adjacent.json > /dev/null || { jq -c '[.adjacent, [.per_layer[].adjacent]]' dsa_adjacent.json >&2; exit 1; }"
  sh $<TARGET_FILE:kvstrata> ${PROJECT_SOURCE_DIR}/scenarios/deepseek_v3_2_8xh200.lua)
set_tests_properties(trace_dsa_adjacent PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} TIMEOUT 120)
set_tests_properties(cli_trace_stats_json cli_trace_stats_text cli_trace_stats_cut
                     PROPERTIES FIXTURES_REQUIRED trace_cli_files)

# a result file is HDF5 but not a trace: the replay refuses it (the result
# is the one cli_run_closed_form writes, engine.cmake: fixture closed_form_h5)
ks_cli_test(policy_trace_not_trace --exit 1 --stdout-empty --stderr-has "not a kvstrata trace"
            -- run ${ks_pol} --set sparse.policy=trace --set sparse.file=${CMAKE_CURRENT_BINARY_DIR}/closed_form.h5
            -o ${CMAKE_CURRENT_BINARY_DIR}/policy_bad.h5)
set_tests_properties(cli_policy_trace_not_trace PROPERTIES FIXTURES_REQUIRED closed_form_h5)

# results/README.md's h5py example, run as written there: its trace (string
# attributes in variable-length UTF-8) is read by trace stats and replayed
add_test(NAME trace_h5py COMMAND ${CMAKE_CURRENT_LIST_DIR}/trace_h5py.sh $<TARGET_FILE:kvstrata>
         ${PROJECT_SOURCE_DIR}/results/README.md ${ks_pol})
set_tests_properties(trace_h5py PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 300)

# Damaged traces and results (issue 16, class 5): tests/fixtures/hostile/trace_*.h5 and
# result_*.h5, written by hostile_gen (run `hostile_gen tests/fixtures/hostile` to remake
# them) or found by bit-flip fuzzing (trace_flip_*.h5). Each is refused by name, exit 1,
# without a crash and before anything it claims is allocated.
add_executable(hostile_gen ${CMAKE_CURRENT_LIST_DIR}/hostile_gen.c)
target_link_libraries(hostile_gen PRIVATE hdf5::hdf5)
set(ks_hostile ${ks_fixtures}/hostile)
ks_cli_test(trace_hostile_rows_huge --exit 1 --stdout-empty
            --stderr-has "dataset /steps claims 2305843009213693952 rows"
            -- trace stats ${ks_hostile}/trace_rows_huge.h5)
ks_cli_test(trace_hostile_signed_minus1 --exit 1 --stdout-empty
            --stderr-has "dataset /steps: field 'request' holds a value its type cannot take"
            -- trace stats ${ks_hostile}/trace_signed_minus1.h5)
ks_cli_test(trace_hostile_context_huge --exit 1 --stdout-empty
            --stderr-has "/steps record 0: context 4294967295 tokens is more than a trace may hold"
            -- trace stats ${ks_hostile}/trace_context_huge.h5)
ks_cli_test(trace_hostile_layers_huge --exit 1 --stdout-empty
            --stderr-has "attribute /layers is 4294967295"
            -- trace stats ${ks_hostile}/trace_layers_huge.h5)
# bit flips: a chunk dimension of 0 (SIGFPE inside H5Dopen: the probe that opens the file
# first dies of it, or exits 1 under a sanitizer), a record member moved outside its record
# (SIGSEGV in H5Dread)
ks_cli_test(trace_hostile_flip_sigfpe --exit 1 --stdout-empty
            --stderr-has "trace_flip_sigfpe.h5: HDF5 fails on its metadata ("
            -- trace stats ${ks_hostile}/trace_flip_sigfpe.h5)
ks_cli_test(trace_hostile_flip_member --exit 1 --stdout-empty
            --stderr-has "field 'block' (4 bytes at offset 2147483648) lies outside the 8-byte record"
            -- trace stats ${ks_hostile}/trace_flip_member.h5)
# found by fuzzing (tests/fuzz/fuzz_trace.c): a superblock that makes H5Fopen itself
# allocate 2^47 bytes (a sanitizer aborts, plain malloc fails), once opened by this
# process before the probe; the probe now opens the file first
ks_cli_test(trace_hostile_flip_open --exit 1 --stdout-empty --stderr-has "trace_flip_open.h5: "
            -- trace stats ${ks_hostile}/trace_flip_open.h5)
# found by fuzzing: a record whose context is 0 tokens (a memset of no buffer, undefined
# behaviour, in the reader and in trace stats); a decode step has a context. The fuzzed file
# (trace_chunk_unread.h5) is refused earlier now, for a chunk whose index claims bytes that
# cannot be read; hostile_gen writes the case alone (trace_context_zero.h5)
ks_cli_test(trace_hostile_context_zero --exit 1 --stdout-empty
            --stderr-has "/steps record 0: context 0 tokens: a decode step reads at least its prompt's"
            -- trace stats ${ks_hostile}/trace_context_zero.h5)
ks_cli_test(trace_hostile_chunk_unread --exit 1 --stdout-empty
            --stderr-has "dataset /steps: chunk 0 (row 0) is indexed with 42 bytes that cannot be read"
            -- trace stats ${ks_hostile}/trace_chunk_unread.h5)
# the same readers serve a replay: run refuses the trace the same way
ks_cli_test(trace_hostile_replay --exit 1 --stdout-empty
            --stderr-has "field 'request' holds a value its type cannot take"
            -- run ${ks_pol} --set sparse.policy=trace --set sparse.file=${ks_hostile}/trace_signed_minus1.h5
            -o ${CMAKE_CURRENT_BINARY_DIR}/hostile_replay.h5)
# README "Writing and reading files safely": sizes and counts are checked against "the file's
# size (x 1100 when compressed)": hostile_gen --ratio writes two traces whose deflated /selected claims
# 2048 x 1100 rows of 8 bytes, one in a 16384-byte file (an expansion of exactly 1100: loads)
# and one in 16383 bytes (1100.07: 2047 x 1100 = 2251700 rows at most, refused by name)
set(ks_ratio_dir ${CMAKE_CURRENT_BINARY_DIR}/ratio)
add_test(NAME trace_ratio_files COMMAND sh -c "mkdir -p \"$1\" && \"$2\" --ratio \"$1\"" sh ${ks_ratio_dir}
         $<TARGET_FILE:hostile_gen>)
set_tests_properties(trace_ratio_files PROPERTIES FIXTURES_SETUP trace_ratio_files)
# (the one record selects one row: trace stats counts the rows the records select, not /selected's extent)
ks_cli_test(trace_ratio_at_bound --json --eq records 1 --eq selections 1 --eq max_selected 1
            -- trace stats ${ks_ratio_dir}/ratio_at.h5 --json)
ks_cli_test(trace_ratio_over_bound --exit 1 --stdout-empty
            --stderr-has "dataset /selected claims 2252800 rows of 8 bytes"
            --stderr-has "a 16383-byte file holds at most 2251700"
            -- trace stats ${ks_ratio_dir}/ratio_over.h5 --json)
set_tests_properties(cli_trace_ratio_at_bound cli_trace_ratio_over_bound PROPERTIES FIXTURES_REQUIRED trace_ratio_files)
# trace model -o refuses the trace it fits (a copy: the fixture is never at risk)
add_test(NAME trace_model_output_is_input
  COMMAND sh -c "set -e; d=model_self; rm -rf $d; mkdir $d; cp \"$2\" $d/t.h5; before=$(md5sum < $d/t.h5); \
rc=0; \"$1\" trace model $d/t.h5 -o $d/t.h5 > $d/out 2> $d/err || rc=$?; [ $rc -eq 1 ]; [ ! -s $d/out ]; \
grep -q 'an input of this run' $d/err; [ \"$(md5sum < $d/t.h5)\" = \"$before\" ]"
  sh $<TARGET_FILE:kvstrata> ${PROJECT_SOURCE_DIR}/results/traces/synthetic_drifting_8k.h5)
set_tests_properties(trace_model_output_is_input PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# README `trace model`: "R(1), R(4) and R(16) stay within 0.4% (stable), 0.6% (drifting) and 1.4%
# (noisy, R(1) at seed 3)" over model seeds 1-8, by the README's loop: each preset's largest
# |reuse_W_error| rounds to its figure ([0.0035, 0.0045), [0.0055, 0.0065), [0.0135, 0.0145))
add_test(NAME trace_model_fit_readme COMMAND ${CMAKE_CURRENT_LIST_DIR}/model_fit_readme.sh $<TARGET_FILE:kvstrata>
         ${ks_pol})
set_tests_properties(trace_model_fit_readme PROPERTIES TIMEOUT 300)

# README `sparse.topic_switch`: "R(1) 0.94 at 0.002, 0.72 at 0.9 on
# `tests/fixtures/scenarios/policies.lua`", measured as trace_topic_switch
# (workload.cmake) records it (2 requests, 32 steps): trace stats' reuse_1
# within half a unit of the second digit, [0.935, 0.945] and [0.715, 0.725]
add_test(NAME trace_topic_switch_readme
  COMMAND sh -c "set -e; for t in 0.002 0.9; do \"$1\" trace record \"$2\" --requests 2 --steps 32 \
--set sparse.topic_switch=$t -o tsr_$t.h5 > /dev/null; \"$1\" trace stats tsr_$t.h5 --json > tsr_$t.json; done; \
jq -e '.reuse_1 >= 0.935 and .reuse_1 <= 0.945' tsr_0.002.json > /dev/null || { jq .reuse_1 tsr_0.002.json >&2; exit 1; }; \
jq -e '.reuse_1 >= 0.715 and .reuse_1 <= 0.725' tsr_0.9.json > /dev/null || { jq .reuse_1 tsr_0.9.json >&2; exit 1; }"
  sh $<TARGET_FILE:kvstrata> ${ks_pol})
set_tests_properties(trace_topic_switch_readme PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# README `sparse.topic_switch` "(at most 0.96875)": the bound itself is accepted, just above it is
# refused (0.99 is refused in trace_topic_switch)
ks_cli_test(trace_topic_switch_at_most --json --ge sparse.topic_switch 0.96875 --le sparse.topic_switch 0.96875
            -- scenario check ${ks_pol} --set sparse.topic_switch=0.96875 --json)
ks_cli_test(trace_topic_switch_above --exit 2 --stdout-empty --stderr-has "sparse.topic_switch: must be at most 96.875%"
            -- scenario check ${ks_pol} --set sparse.topic_switch=0.96876)
