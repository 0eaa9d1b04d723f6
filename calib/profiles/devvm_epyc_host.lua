-- devvm_epyc_host.lua - measured host profile, written by kvstrata calib host.
-- Command: kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua
-- Machine: vm, AMD EPYC, 2 cores; --dir on ext4 on /dev/vda; 2026-11-29T15:23:07Z
-- DRAM fit (all cores): lat 5.38 us, bw 8.481 GB/s copied (dram_bw: twice that, bytes moved), worst residual 34.2%
-- SSD read fit: lat 31.6 us, op 6.91 us, bw 558.4 MB/s, worst residual 23.4%
-- SSD write fit: lat 43.3 us, op 8.35 us, bw 645.8 MB/s, worst residual 13.2%
-- Measured SSD points (op bytes qd MB/s IOPS us/request; slowest-fastest window MB/s):
--   read     4096  1     92.3    22525      44.4; 0.1-96.1
--   read     4096  2    104.5    25502      78.4; 14.5-153.2
--   read     4096  4    197.7    48255      82.9; 166.8-203.7
--   read     4096  8    195.1    47635     167.9; 20.5-224.3
--   read     4096 16    234.1    57156     279.9; 31.7-239.3
--   read     4096 32    271.1    66199     483.4; 266.4-284.9
--   read     4096 64    299.8    73190     874.4; 145.7-319.7
--   read    16384  1    256.7    15668      63.8; 56.0-262.5
--   read    16384  2    382.6    23354      85.6; 349.4-384.9
--   read    16384  4    320.3    19547     204.6; 166.8-393.1
--   read    16384  8    395.9    24162     331.1; 363.9-439.7
--   read    16384 16    436.2    26621     601.0; 403.5-450.1
--   read    16384 32    476.0    29051    1101.5; 430.0-528.5
--   read    16384 64    469.7    28666    2232.6; 460.8-583.6
--   read    65536  1    376.1     5738     174.3; 348.4-450.6
--   read    65536  2    428.9     6544     305.6; 418.0-447.0
--   read    65536  4    523.6     7989     500.7; 492.7-538.1
--   read    65536  8    535.4     8169     979.3; 494.8-570.3
--   read    65536 16    559.8     8542    1873.0; 520.2-628.0
--   read    65536 32    465.4     7101    4506.5; 439.5-545.6
--   read    65536 64    485.9     7415    8631.7; 453.1-498.4
--   read   262144  1    533.1     2034     491.8; 514.4-576.2
--   read   262144  2    573.9     2189     913.5; 536.4-599.9
--   read   262144  4    579.7     2212    1808.7; 549.7-603.7
--   read   262144  8    528.9     2018    3965.1; 473.0-533.9
--   read   262144 16    522.2     1992    8032.5; 501.6-546.3
--   read   262144 32    530.6     2024   15810.9; 491.2-574.5
--   read   262144 64    528.8     2017   31726.5; 480.3-538.5
--   read  1048576  1    566.6      540    1850.6; 536.2-570.8
--   read  1048576  2    538.2      513    3896.9; 492.6-576.6
--   read  1048576  4    536.8      512    7813.7; 524.4-553.8
--   read  1048576  8    530.4      506   15814.6; 518.8-551.6
--   read  1048576 16    538.3      513   31165.2; 483.4-600.2
--   read  1048576 32    547.4      522   61300.1; 519.9-595.9
--   read  1048576 64    553.8      528  121174.2; 480.3-573.6
--   read  4194304  1    537.3      128    7805.6; 516.3-557.4
--   read  4194304  2    561.3      134   14945.4; 523.8-602.4
--   read  4194304  4    624.0      149   26887.3; 542.4-656.7
--   read  4194304  8    542.0      129   61912.0; 523.3-571.8
--   read  4194304 16    543.3      130  123530.5; 516.5-572.7
--   read  4194304 32    528.6      126  253915.8; 516.4-583.4
--   read  4194304 64    564.4      135  475615.4; 530.6-613.3
--   write    4096  1     76.6    18701      53.5; 41.7-79.0
--   write    4096  2    111.9    27331      73.2; 81.8-140.4
--   write    4096  4    164.4    40132      99.7; 118.0-170.2
--   write    4096  8    196.8    48040     166.5; 179.3-210.2
--   write    4096 16    223.5    54569     293.2; 201.3-235.5
--   write    4096 32    240.6    58745     544.7; 237.5-282.6
--   write    4096 64    301.3    73563     870.0; 286.2-313.2
--   write   16384  1    221.5    13521      74.0; 197.9-260.0
--   write   16384  2    258.5    15778     126.8; 218.3-339.4
--   write   16384  4    358.2    21861     183.0; 331.6-391.9
--   write   16384  8    384.0    23438     341.3; 363.7-394.6
--   write   16384 16    439.4    26817     596.6; 422.8-456.3
--   write   16384 32    453.1    27656    1157.1; 390.9-485.3
--   write   16384 64    505.0    30820    2076.6; 467.3-575.6
--   write   65536  1    390.3     5955     167.9; 352.5-452.6
--   write   65536  2    487.9     7445     268.6; 428.4-648.0
--   write   65536  4    516.8     7885     507.3; 471.3-534.3
--   write   65536  8    584.3     8915     897.3; 551.4-590.5
--   write   65536 16    655.3     9999    1600.1; 486.4-718.8
--   write   65536 32    521.3     7954    4023.0; 474.9-534.7
--   write   65536 64    579.0     8835    7244.3; 541.2-597.5
--   write  262144  1    586.5     2237     447.0; 514.6-593.3
--   write  262144  2    602.8     2300     869.7; 572.1-656.8
--   write  262144  4    647.4     2470    1619.7; 598.2-654.8
--   write  262144  8    616.0     2350    3404.7; 587.4-649.4
--   write  262144 16    563.1     2148    7448.4; 556.4-625.3
--   write  262144 32    631.3     2408   13287.2; 554.9-681.9
--   write  262144 64    640.4     2443   26197.6; 617.2-666.8
--   write 1048576  1    665.0      634    1576.7; 655.9-678.6
--   write 1048576  2    652.1      622    3216.2; 599.8-684.1
--   write 1048576  4    553.9      528    7572.6; 541.0-606.1
--   write 1048576  8    620.8      592   13512.9; 582.0-642.2
--   write 1048576 16    630.9      602   26592.9; 603.9-666.4
--   write 1048576 32    683.5      652   49090.0; 634.8-717.1
--   write 1048576 64    659.6      629  101742.2; 574.1-670.5
--   write 4194304  1    591.8      141    7087.4; 537.4-658.9
--   write 4194304  2    662.2      158   12668.0; 640.0-707.2
--   write 4194304  4    660.3      157   25410.4; 644.6-667.9
--   write 4194304  8    665.9      159   50389.7; 656.6-786.2
--   write 4194304 16    709.1      169   94637.1; 669.3-766.2
--   write 4194304 32    620.1      148  216458.1; 615.1-679.9
--   write 4194304 64    660.1      157  406687.6; 601.3-670.4
return {
  name = "devvm_epyc_host",
  part = "host vm (AMD EPYC, 2 cores, 24 GiB), drive ext4 on /dev/vda; GPU figures from /work/main/calib/profiles/h200_sxm_pcie5.lua",
  notes = "host figures measured by kvstrata calib host (kind \"measured\"); every other figure is the base profile's, with its own source and kind",
  hbm_bytes = {value = "141GB", source = "NVIDIA H200 SXM datasheet: 141 GB HBM3e", kind = "datasheet"},
  hbm_bw = {value = "4.8TBps", source = "NVIDIA H200 SXM datasheet: 4.8 TB/s", kind = "datasheet"},
  pcie_bw = {value = "50GBps", source = "PCIe Gen5 x16 on H100, large copies, one direction: ~50 GB/s (vLLM KV-offloading blog, 2025-12)", kind = "measured (published)"},
  pcie_lat = {value = "1us", source = "no published figure at hand; order of a PCIe round trip (the per-copy cost is copy_overhead)", kind = "assumed"},
  copy_overhead = {value = "6us", source = "fixed cost per cudaMemcpyAsync: 5-7 us (DualPath, arXiv 2602.21548, sec. 5.2)", kind = "measured (published)"},
  nvlink_bw = {value = "450GBps", source = "NVLink 4 (H100/H200 SXM): 900 GB/s total per GPU, 450 GB/s per direction (NVIDIA datasheet)", kind = "datasheet"},
  gpus_per_switch = {value = 2, source = "HGX 8-GPU baseboard with two GPUs behind each PCIe switch uplink; not from a measured source", kind = "assumed"},
  l2 = {value = 25276063744, source = "MemTotal of /proc/meminfo on vm, 2026-11-29T15:23:07Z (all of it; the runtime gets less)", kind = "measured"},
  dram_bw = {value = "16.961003708GBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z: memcpy of 64 KiB to 1024 MiB from memory out of cache, 2 threads at once, bytes copied per second; fit t = lat + threads * size / bw: lat 5.38 us, worst residual 34.2%; one thread: 5.15 GB/s (lat 2.94 us, worst residual 30.7%). dram_bw counts bytes moved, read plus written: twice the 8.4805 GB/s copied (converted on 2026-11-29, when the simulator began to charge host memory: sim/platform.h)", kind = "measured"},
  ssd = {
    count = {value = 1, source = "the one device that holds /var/tmp (ext4 on /dev/vda) on vm, 2026-11-29T15:23:07Z", kind = "measured"},
    read_bw = {value = "558.4003741MBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 31.6 us, op 6.91 us, bw 558.4 MB/s; worst residual 23.4% (4 KiB, qd 2)", kind = "measured"},
    write_bw = {value = "645.7709504MBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z: O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 43.3 us (the profile has one ssd.lat, the reads'), op 8.35 us, bw 645.8 MB/s; worst residual 13.2% (1024 KiB, qd 4)", kind = "measured"},
    lat = {value = "31.61206622us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 31.6 us, op 6.91 us, bw 558.4 MB/s; worst residual 23.4% (4 KiB, qd 2)", kind = "measured"},
    read_op_time = {value = "6.909857119us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 31.6 us, op 6.91 us, bw 558.4 MB/s; worst residual 23.4% (4 KiB, qd 2)", kind = "measured"},
    write_op_time = {value = "8.354162238us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z: O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 43.3 us (the profile has one ssd.lat, the reads'), op 8.35 us, bw 645.8 MB/s; worst residual 13.2% (1024 KiB, qd 4)", kind = "measured"},
  },
  network = {
    topology = {value = "fat_tree", source = "a fat-tree cluster network is the common choice; not a measured figure", kind = "assumed"},
    bw = {value = "190GBps", source = "Mooncake transfer engine, 8x400 Gbps RoCE: ~190 GB/s (measured, Mooncake)", kind = "measured (published)"},
    lat = {value = "5us", source = "no published figure at hand; order of an RDMA one-way latency", kind = "assumed"},
  },
  flops = {value = "990TFLOPS", source = "H100/H200 SXM dense BF16: ~990 TFLOP/s (NVIDIA datasheet)", kind = "datasheet"},
  sched_overhead = {value = "50us", source = "no published figure at hand; host-side batch scheduling per decode step of a C++ runtime with CUDA graphs, order of tens of microseconds", kind = "assumed"},
  table_rebuild = {value = "10us", source = "no published figure at hand; one small host-to-device copy of the resident-block pointer table plus its launch, about one copy_overhead", kind = "assumed"},
  prefill_efficiency = {value = 0.5, source = "no measured figure at hand; long-context prefill reaches about half of the dense peak once attention dominates", kind = "assumed"},
}
