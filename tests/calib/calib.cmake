# Calibration (calib/): the fitter on synthetic curves, the DRAM benchmark's
# calls on small regions, the wake-up benchmark's bounds, the profile
# writer's round trip through the scenario loader, `calib host --quick` and
# `calib check --quick` on a disk-backed directory of the build tree (with
# their points' window spreads), calib check's numbers against the profile's
# closed forms, bad inputs, and a tiny fio comparison. (The simulated SSD
# experiment of calib check is the engine's: engine.simssd.)
# Benchmarks here run for seconds: --quick everywhere.

ks_add_test(calib.fit test_calib_fit.c)
target_link_libraries(calib_fit PRIVATE ks_calib)
# windows of several sizes and thread counts on regions prepared once; its
# threads start and stop on every call, so it runs under TSan too
ks_add_test(calib.dram test_calib_dram.c)
target_link_libraries(calib_dram PRIVATE ks_calib)
ks_tsan_test(calib.dram)
# wake-ups of a thread idle on a condition variable: bounds, not figures, and
# host_wake through the profile writer and back; a waiter thread per call,
# so it runs under TSan too
ks_add_test(calib.wake test_calib_wake.c)
target_link_libraries(calib_wake PRIVATE ks_calib)
target_compile_definitions(calib_wake PRIVATE
  KS_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}" KS_TEST_BINARY_DIR="${CMAKE_CURRENT_BINARY_DIR}")
ks_tsan_test(calib.wake)
ks_add_test(calib.profile test_calib_profile.c)
target_link_libraries(calib_profile PRIVATE ks_calib)
target_compile_definitions(calib_profile PRIVATE
  KS_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}" KS_TEST_BINARY_DIR="${CMAKE_CURRENT_BINARY_DIR}")

# The benchmarks' directory: in the build tree (a disk here, never tmpfs
# unless the build tree is); a test skips (77) when it refuses O_DIRECT.
set(ks_cal_dir ${CMAKE_CURRENT_BINARY_DIR}/calib_tmp)
file(MAKE_DIRECTORY ${ks_cal_dir})

# ks_calib_skip_test(NAME CHECKS... -- ARGS...): ks_cli_test, except that a
# failure whose stderr says the directory refuses O_DIRECT is a skip.
function(ks_calib_skip_test name)
  list(FIND ARGN "--" dash)
  list(SUBLIST ARGN 0 ${dash} checks)
  math(EXPR first "${dash} + 1")
  list(SUBLIST ARGN ${first} -1 args)
  string(REPLACE ";" " " checks_s "${checks}")
  string(REPLACE ";" " " args_s "${args}")
  add_test(NAME cli_${name} COMMAND sh -c
    "out=$(mktemp) && err=$(mktemp) && $<TARGET_FILE:test_cli> ${checks_s} -- $<TARGET_FILE:kvstrata> ${args_s} > $out 2> $err; rc=$?; cat $out $err >&2; if [ $rc != 0 ] && grep -q 'refuses O_DIRECT\\|which is memory' $err; then rc=77; fi; rm -f $out $err; exit $rc")
  set_tests_properties(cli_${name} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE ${KS_TEST_SKIP})
  ks_kind(contract cli_${name})
endfunction()

# calib host --quick writes a full profile that loads; then the scenario
# loader reads it (a profile check, and a scenario run on it in calib_profile)
ks_calib_skip_test(calib_host_quick --json --gt threads 0 --is dir ${ks_cal_dir} --has ssd_read_fit
                   --has dram_fit_all_threads --gt file_bytes 0
                   -- calib host --quick --dir ${ks_cal_dir} -o ${ks_cal_dir}/calib_quick.lua --json)
# the profile calib host writes names the CPU it was measured on (`cpu`, the
# JSON's cpu: /proc/cpuinfo's model), which validate compares with its own
add_test(NAME calib_host_cpu COMMAND sh -c
  "d=${ks_cal_dir}/cpu; rm -rf $d; mkdir -p $d; $<TARGET_FILE:kvstrata> calib host --quick --dir ${ks_cal_dir} -o $d/p.lua --json > $d/j 2> $d/err || { cat $d/err >&2; grep -q 'refuses O_DIRECT\\|which is memory' $d/err && exit 77; exit 1; }; \
cpu=$(jq -r .cpu $d/j); [ -n \"$cpu\" ] && [ \"$cpu\" != null ] || { echo 'no cpu in the JSON' >&2; exit 1; }; \
[ \"$(grep -c '^  cpu = ' $d/p.lua)\" = 1 ] && grep -Fxq \"  cpu = \\\"$cpu\\\",\" $d/p.lua || { echo \"the profile does not say cpu = $cpu\" >&2; grep -n cpu $d/p.lua >&2; exit 1; }")
set_tests_properties(calib_host_cpu PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE ${KS_TEST_SKIP})
ks_calib_skip_test(calib_check_quick --json --has goals --has ssd_read --has all_goals_met --has gpu
                   -- calib check h200_sxm_pcie5 --quick --dir ${ks_cal_dir} --json)
ks_cli_test(calib_check_dram_only --json --has goals --has dram --stdout-lacks ssd_read --is profile_cpu "AMD EPYC"
            -- calib check devvm_epyc_host --quick --json)
ks_cli_test(calib_check_text --stdout-has "goal 5%" --stdout-has "ssd: not checked" --stdout-has "windows_GB/s"
            --stdout-has "measurement noise" --stdout-has "the profile was measured on AMD EPYC"
            -- calib check devvm_epyc_host --quick)
# the help says how the DRAM points are measured and what their goal reports
ks_cli_test(calib_check_help --stdout-has "in rounds" --stdout-has "the DRAM and SSD goals also" -- calib check --help)
ks_cli_test(calib_host_help --stdout-has "rounds, each one window of every size and thread count"
            --stdout-has "host_wake" -- calib host --help)
# a profile without host_wake (datasheet profiles have none): said, and skipped
ks_cli_test(calib_check_no_wake --json --has host_wake --stdout-lacks "\"wake\"" --stdout-lacks "host wake-up"
            -- calib check h200_sxm_pcie5 --quick --json)
ks_cli_test(calib_check_no_wake_text --stdout-has "host_wake: none in the profile"
            -- calib check h200_sxm_pcie5 --quick)
# a profile whose host_wake idle times are out of order: the profile check refuses it, naming file, line and key
set(ks_h200 ${PROJECT_SOURCE_DIR}/calib/profiles/h200_sxm_pcie5.lua)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ks_h200})
file(READ ${ks_h200} ks_bad_wake)
string(REPLACE "return {" "return {\n  host_wake = {idle = {1e-3, 1e-4}, seconds = {2e-5, 1e-5}, source = \"test\", kind = \"measured\"},"
       ks_bad_wake "${ks_bad_wake}")
file(WRITE ${ks_cal_dir}/bad_wake.lua "${ks_bad_wake}")
ks_cli_test(calib_check_bad_wake --exit 1 --stdout-empty --stderr-has "bad_wake.lua:5: host_wake.idle: entry [2]: idle times are strictly increasing"
            -- calib check ${ks_cal_dir}/bad_wake.lua --quick)

# every measured point (DRAM and SSD, host and check): slowest window <=
# median <= fastest and window_spread = (fastest - slowest) / median; and
# each goal's worst_window_spread and points_spread_beyond_goal are its
# points' (calib_spread_check.sh, with jq)
set(ks_spread ${CMAKE_CURRENT_LIST_DIR}/calib_spread_check.sh $<TARGET_FILE:kvstrata>)
add_test(NAME calib_check_spread COMMAND ${ks_spread} calib check devvm_epyc_host --quick)
add_test(NAME calib_check_spread_ssd COMMAND ${ks_spread} calib check h200_sxm_pcie5 --quick --dir ${ks_cal_dir})
add_test(NAME calib_host_spread COMMAND ${ks_spread} calib host --quick --dir ${ks_cal_dir}
         -o ${ks_cal_dir}/calib_spread.lua)
# calib check on a profile with host_wake: the one calib host --quick writes
# (its wake points and the "host wake-up" goal)
add_test(NAME calib_check_wake_spread COMMAND sh -c
  "$<TARGET_FILE:kvstrata> calib host --quick --dir ${ks_cal_dir} -o ${ks_cal_dir}/calib_wake.lua > /dev/null 2> ${ks_cal_dir}/calib_wake.err || { cat ${ks_cal_dir}/calib_wake.err >&2; grep -q 'refuses O_DIRECT\\|which is memory' ${ks_cal_dir}/calib_wake.err && exit 77; exit 1; }; exec ${CMAKE_CURRENT_LIST_DIR}/calib_spread_check.sh $<TARGET_FILE:kvstrata> calib check ${ks_cal_dir}/calib_wake.lua --quick")
# calib check's numbers against the profile's closed forms (calib_check_model.sh,
# with jq): every DRAM, SSD read and SSD write point's predicted_s from the
# figures the scenario loader reads, every rel_error, each goal's worst and
# met, and all_goals_met; on a calib host --quick profile (op times and
# host_wake measured) and on a datasheet one (op times absent: 0)
set(ks_model ${CMAKE_CURRENT_LIST_DIR}/calib_check_model.sh $<TARGET_FILE:kvstrata> ${ks_cal_dir}
    ${PROJECT_SOURCE_DIR}/tests/fixtures/scenarios/seed_default.lua)
add_test(NAME calib_check_model COMMAND ${ks_model})
add_test(NAME calib_check_model_datasheet COMMAND ${ks_model} ${PROJECT_SOURCE_DIR}/calib/profiles/h200_sxm_pcie5.lua)
# the text report has the SSD writes beside the reads (words without spaces:
# ks_calib_skip_test passes its checks through sh)
ks_calib_skip_test(calib_check_writes_text --stdout-has writes: --stdout-has ssd.write_op_time
                   --stdout-has write_bw: -- calib check h200_sxm_pcie5 --quick --dir ${ks_cal_dir})
set_tests_properties(calib_check_spread calib_check_spread_ssd calib_host_spread calib_check_wake_spread
                     calib_check_model calib_check_model_datasheet PROPERTIES
                     SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 120)
set_tests_properties(calib_check_spread_ssd calib_host_spread calib_check_wake_spread calib_check_model
                     calib_check_model_datasheet cli_calib_check_writes_text PROPERTIES RUN_SERIAL TRUE)

# every shipped profile says where its figures come from in itself: no
# reference to a file outside the repository, a datasheet figure names its
# datasheet, an estimate is not of kind "datasheet" (with lua5.4)
add_test(NAME calib_profile_sources COMMAND ${CMAKE_CURRENT_LIST_DIR}/calib_profile_sources.sh
         ${PROJECT_SOURCE_DIR}/calib/profiles)
set_tests_properties(calib_profile_sources PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP})

# the shipped measured profile loads in a scenario
ks_cli_test(calib_shipped_profile --json --is platform.profile devvm_epyc_host --gt platform.ssd.read_op_time 0
            -- scenario check ${PROJECT_SOURCE_DIR}/scenarios/default.lua --set platform.profile=devvm_epyc_host --json)

# bad inputs: usage errors exit 2 with nothing on stdout; failures exit 1
ks_cli_test(calib_missing_dir --exit 2 --stdout-empty --stderr-has "missing --dir" -- calib host -o ${ks_cal_dir}/x.lua)
ks_cli_test(calib_missing_out --exit 2 --stdout-empty --stderr-has "missing -o" -- calib host --dir ${ks_cal_dir})
ks_cli_test(calib_bad_out --exit 2 --stdout-empty --stderr-has ".lua" -- calib host --dir ${ks_cal_dir} -o ${ks_cal_dir}/x.txt)
ks_cli_test(calib_bad_out_name --exit 2 --stdout-empty --stderr-has "letters, digits"
            -- calib host --dir ${ks_cal_dir} -o "${ks_cal_dir}/a b.lua")
ks_cli_test(calib_out_no_dir --exit 1 --stdout-empty --stderr-has "no directory"
            -- calib host --dir ${ks_cal_dir} -o /nonexistent-ks/x.lua)
ks_cli_test(calib_no_such_dir --exit 1 --stdout-empty --stderr-has "--dir /nonexistent-ks: No such file"
            -- calib host --quick --dir /nonexistent-ks -o ${ks_cal_dir}/x.lua)
# a file where a directory is wanted: refused before anything is measured
ks_cli_test(calib_dir_not_dir --exit 1 --stdout-empty --stderr-has "not a directory"
            -- calib host --quick --dir ${PROJECT_SOURCE_DIR}/README.md -o ${ks_cal_dir}/x.lua)
ks_cli_test(calib_check_no_such_dir --exit 1 --stdout-empty --stderr-has "--dir /nonexistent-ks: No such file"
            -- calib check h200_sxm_pcie5 --quick --dir /nonexistent-ks)
ks_cli_test(calib_dir_is_file --exit 1 --stdout-empty --stderr-has "not a directory"
            -- calib host --quick --dir ${PROJECT_SOURCE_DIR}/CMakeLists.txt -o ${ks_cal_dir}/x.lua)
ks_cli_test(calib_unwritable_dir --exit 1 --stdout-empty --stderr-has "cannot create a file in /proc"
            -- calib host --quick --dir /proc -o ${ks_cal_dir}/x.lua)
ks_cli_test(calib_bad_base --exit 2 --stdout-empty --stderr-has "no such profile"
            -- calib host --quick --dir ${ks_cal_dir} --base nosuch -o ${ks_cal_dir}/x.lua)
ks_cli_test(calib_bad_file_size --exit 2 --stdout-empty --stderr-has "--file-size"
            -- calib host --dir ${ks_cal_dir} --file-size 6 -o ${ks_cal_dir}/x.lua)
ks_cli_test(calib_check_no_profile --exit 2 --stdout-empty --stderr-has "no such profile" -- calib check nosuch)
ks_cli_test(calib_gpu_no_out --exit 2 --stdout-empty --stderr-has "missing -o" -- calib gpu)
# calib gpu also times the kernels, as bench kernels does, into the profile's kernel_time,
# and copy_overhead comes from the runtime's batched copy call
ks_cli_test(calib_gpu_help --stdout-has "bench kernels --backend cuda --profile" --stdout-has "kernel_time"
            --stdout-has "ks_copy_batch_async" -- calib gpu --help)
if(EXISTS /dev/shm)
  ks_cli_test(calib_tmpfs_dir --exit 1 --stdout-empty --stderr-has "tmpfs refuses O_DIRECT"
              -- calib host --quick --dir /dev/shm -o ${ks_cal_dir}/x.lua)
endif()
# without a GPU `calib gpu` says so and exits 1; with one it is not run here (minutes)
add_test(NAME cli_calib_gpu_none COMMAND sh -c
  "n=$($<TARGET_FILE:kvstrata> info --json | sed -n 's/.*\"cuda_devices\": *\\([0-9]*\\).*/\\1/p'); [ \"$n\" = 0 ] || exit 77; $<TARGET_FILE:test_cli> --exit 1 --stdout-empty --stderr-has 'no GPU' -- $<TARGET_FILE:kvstrata> calib gpu -o ${ks_cal_dir}/gpu.lua")
set_tests_properties(cli_calib_gpu_none PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 60)
ks_gpu_tests(cli_calib_gpu_none)

# fio and our SSD benchmark measure the same thing: the tiny version (5
# windows of 0.05 s per point in both, ~20 s), within a factor of ten either way (a
# shared virtual disk varies several-fold between short windows and over
# minutes: a factor of four failed once in a full ctest run; the 10%
# comparison is the full run documented in calib/README.md). It still
# catches the gross errors: buffered I/O runs at memory speed, a wrong request
# size or queue depth is orders of magnitude off. calib_fio_check.sh checks
# too that fio's side is its windows (at least half the points all 5, the
# others named), not its whole-run figure.
add_test(NAME calib_fio_compare COMMAND ${CMAKE_CURRENT_LIST_DIR}/calib_fio_check.sh --quick --tolerance 9.0
         --kvstrata $<TARGET_FILE:kvstrata> ${ks_cal_dir})
set_tests_properties(calib_fio_compare PROPERTIES SKIP_RETURN_CODE ${KS_TEST_SKIP} TIMEOUT 120 RUN_SERIAL TRUE)
set_tests_properties(cli_calib_host_quick cli_calib_check_quick PROPERTIES RUN_SERIAL TRUE)
# the "dsa" access model's shipped profile against its calibration inputs
# (calib/locality/dsa.lua), measured with trace stats' code at 16K and 64K:
# per-layer consecutive overlaps and the adjacent-layer overlap (IndexCache);
# a wrong profile fails, and so do independent layers; refitting gives the
# shipped table and lambda
ks_add_test(calib.dsa test_calib_dsa.c)
target_link_libraries(calib_dsa PRIVATE ks_locality ks_trace)
target_compile_definitions(calib_dsa PRIVATE KS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
