# Access traces: their statistics (tracestats), the access model fitted to
# them (accessmodel), and `kvstrata trace stats`.
ks_add_test(unit_tracestats test_tracestats.c)
target_link_libraries(unit_tracestats PRIVATE ks_workload)
ks_add_test(unit_accessmodel test_accessmodel.c)
target_link_libraries(unit_accessmodel PRIVATE ks_workload)

# The CLI tests read a small random trace and a copy cut in half, which
# unit_tracestats writes first.
set(ks_trace_dir ${CMAKE_CURRENT_BINARY_DIR}/trace_cli)
file(MAKE_DIRECTORY ${ks_trace_dir})
add_test(NAME trace_cli_fixture COMMAND unit_tracestats --write ${ks_trace_dir}/small.h5 ${ks_trace_dir}/cut.h5)
set_tests_properties(trace_cli_fixture PROPERTIES FIXTURES_SETUP trace_cli_files)

ks_cli_test(trace_stats_json --json --stderr-empty --is file ${ks_trace_dir}/small.h5
            --ge requests 2 --le requests 2 --ge layers 2 --le layers 2 --ge records 160 --le records 160
            --ge mean_selected 8 --le mean_selected 8
            --gt reuse_1 0.5 --lt reuse_1 1 --gt reuse_4 0.5 --le reuse_4 1 --gt reuse_16 0.5 --le reuse_16 1
            --has reuse_256 --has reuse_distance --has cold --ge neighbour 0 --le neighbour 1 --has neighbour_new
            --gt working_set_16 8 --has working_set_16_series --has working_set_256
            --ge mass_top1 0.125 --le mass_top1 0.125 --ge mass_top8 1 --le mass_total 1.0001
            --ge opt_l1_100pct 16 --le opt_l1_100pct 16 --gt opt_hit_100pct 0.5 --le opt_hit_100pct 1
            --ge opt_hit_200pct 0.5 --has opt_hit_25pct --has per_layer
            -- trace stats ${ks_trace_dir}/small.h5 --json)
ks_cli_test(trace_stats_text --stdout-has "reuse_1" --stdout-has "opt_hit_100pct" --stdout-has "# "
            --stdout-has "reuse distance" --stdout-has "per layer" --stderr-empty
            -- trace stats ${ks_trace_dir}/small.h5)
ks_cli_test(trace_stats_cut --exit 1 --stdout-empty --stderr-has "${ks_trace_dir}/cut.h5:"
            -- trace stats ${ks_trace_dir}/cut.h5 --json)
ks_cli_test(trace_stats_not_hdf5 --exit 1 --stdout-empty --stderr-has "trace.cmake: cannot be opened"
            -- trace stats ${CMAKE_CURRENT_SOURCE_DIR}/trace.cmake)
# a missing file is said to be missing, not "not HDF5"
ks_cli_test(trace_stats_missing --exit 1 --stdout-empty --stderr-has "${ks_trace_dir}/none.h5: No such file or directory"
            -- trace stats ${ks_trace_dir}/none.h5)
ks_cli_test(trace_model_missing --exit 1 --stdout-empty --stderr-has "${ks_trace_dir}/none.h5: No such file or directory"
            -- trace model ${ks_trace_dir}/none.h5 -o ${ks_trace_dir}/none_model.h5)
ks_cli_test(trace_stats_usage --exit 2 --stdout-empty --stderr-has "TRACE.h5" -- trace stats)
ks_cli_test(trace_stats_help --stdout-has "Usage: kvstrata trace stats TRACE.h5" --stdout-has "reuse_W"
            -- trace stats --help)
set_tests_properties(cli_trace_stats_json cli_trace_stats_text cli_trace_stats_cut
                     PROPERTIES FIXTURES_REQUIRED trace_cli_files)
