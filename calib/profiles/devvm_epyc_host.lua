-- devvm_epyc_host.lua - measured host profile, written by kvstrata calib host.
-- Command: kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua
-- Machine: vm, AMD EPYC, 2 cores; --dir on ext4 on /dev/vda; 2026-11-29T17:58:06Z
-- DRAM fit (all cores): lat 1.8 us, bw 25.98 GB/s moved (3 or 2 bytes per byte copied, calib/dram.h), worst residual 10.4%
-- SSD read fit: lat 26.8 us, op 5.96 us, bw 603.6 MB/s, worst residual 18.1%
-- SSD write fit: lat 38.3 us, op 7.83 us, bw 616.6 MB/s, worst residual 30.4%
-- Measured SSD points (op bytes qd MB/s IOPS us/request; slowest-fastest window MB/s):
--   read     4096  1    100.2    24464      40.9; 0.1-109.2
--   read     4096  2    171.0    41755      47.9; 49.6-189.0
--   read     4096  4    188.4    46003      87.0; 162.9-204.1
--   read     4096  8    211.1    51526     155.3; 60.1-240.0
--   read     4096 16    251.9    61488     260.2; 55.0-257.0
--   read     4096 32    290.3    70867     451.5; 282.4-298.2
--   read     4096 64    367.5    89715     713.4; 157.1-391.6
--   read    16384  1    274.0    16727      59.8; 64.2-285.1
--   read    16384  2    365.5    22308      89.7; 351.3-392.6
--   read    16384  4    392.6    23960     166.9; 187.5-405.6
--   read    16384  8    424.9    25933     308.5; 3.5-442.8
--   read    16384 16    465.8    28432     562.7; 462.9-520.3
--   read    16384 32    492.2    30040    1065.3; 351.6-562.4
--   read    16384 64    529.1    32292    1981.9; 517.6-581.8
--   read    65536  1    500.1     7631     131.1; 428.7-504.2
--   read    65536  2    564.1     8607     232.4; 546.9-638.7
--   read    65536  4    545.3     8321     480.7; 520.1-581.7
--   read    65536  8    554.9     8467     944.8; 544.7-593.3
--   read    65536 16    633.3     9663    1655.7; 621.8-667.2
--   read    65536 32    568.5     8674    3689.0; 531.4-648.0
--   read    65536 64    551.9     8421    7600.2; 537.1-577.1
--   read   262144  1    578.7     2208     453.0; 533.4-647.5
--   read   262144  2    629.8     2403     832.5; 600.5-639.7
--   read   262144  4    636.5     2428    1647.5; 609.8-677.1
--   read   262144  8    594.4     2267    3528.3; 575.8-611.6
--   read   262144 16    553.4     2111    7579.7; 528.4-601.3
--   read   262144 32    566.2     2160   14816.8; 505.3-604.8
--   read   262144 64    598.4     2283   28035.1; 587.8-627.7
--   read  1048576  1    677.0      646    1548.9; 603.9-803.6
--   read  1048576  2    573.2      547    3658.7; 554.6-670.2
--   read  1048576  4    586.5      559    7151.3; 538.7-636.9
--   read  1048576  8    622.5      594   13475.3; 573.1-686.1
--   read  1048576 16    625.5      596   26823.4; 555.2-704.1
--   read  1048576 32    552.4      527   60741.4; 288.9-601.5
--   read  1048576 64    574.1      547  116897.3; 544.4-613.5
--   read  4194304  1    526.6      126    7965.3; 428.7-555.2
--   read  4194304  2    527.0      126   15918.9; 515.4-626.6
--   read  4194304  4    591.5      141   28364.3; 526.4-623.7
--   read  4194304  8    536.4      128   62558.3; 491.1-544.5
--   read  4194304 16    571.6      136  117413.6; 542.2-620.7
--   read  4194304 32    593.2      141  226247.4; 527.4-640.2
--   read  4194304 64    562.5      134  477189.3; 517.2-603.2
--   write    4096  1     80.9    19748      50.6; 71.4-82.7
--   write    4096  2    137.0    33443      59.8; 101.5-143.5
--   write    4096  4    137.2    33497     119.4; 124.7-159.5
--   write    4096  8    199.3    48662     164.4; 176.8-213.6
--   write    4096 16    200.5    48962     326.8; 197.4-246.7
--   write    4096 32    232.7    56815     563.2; 224.1-245.9
--   write    4096 64    289.5    70687     905.4; 272.3-291.5
--   write   16384  1    165.6    10106      99.0; 141.3-242.5
--   write   16384  2    326.5    19925     100.4; 247.4-337.9
--   write   16384  4    377.5    23040     173.6; 330.8-403.5
--   write   16384  8    417.0    25454     314.3; 390.1-446.3
--   write   16384 16    452.6    27627     579.1; 403.1-505.0
--   write   16384 32    450.2    27481    1164.5; 425.7-545.0
--   write   16384 64    610.2    37241    1718.5; 478.8-634.0
--   write   65536  1    476.0     7264     137.7; 361.0-523.0
--   write   65536  2    520.8     7947     251.7; 420.0-654.3
--   write   65536  4    566.4     8642     462.9; 537.6-570.3
--   write   65536  8    620.2     9464     845.3; 584.1-629.5
--   write   65536 16    678.4    10352    1545.6; 622.6-711.7
--   write   65536 32    579.4     8841    3619.5; 541.0-647.8
--   write   65536 64    527.3     8046    7954.7; 518.5-577.8
--   write  262144  1    590.5     2252     444.0; 564.4-723.3
--   write  262144  2    601.2     2294     872.0; 592.8-680.4
--   write  262144  4    600.0     2289    1747.7; 592.3-676.5
--   write  262144  8    620.3     2366    3380.8; 608.7-654.6
--   write  262144 16    619.9     2365    6766.3; 505.0-651.8
--   write  262144 32    581.6     2219   14422.6; 509.1-598.9
--   write  262144 64    592.0     2258   28339.8; 515.0-706.9
--   write 1048576  1    555.8      530    1886.6; 499.2-589.2
--   write 1048576  2    546.7      521    3835.8; 514.2-641.7
--   write 1048576  4    637.1      608    6583.5; 619.9-695.1
--   write 1048576  8    601.6      574   13944.1; 594.6-634.6
--   write 1048576 16    632.4      603   26529.8; 606.8-655.1
--   write 1048576 32    537.4      513   62438.1; 519.2-597.5
--   write 1048576 64    519.8      496  129105.1; 469.0-582.3
--   write 4194304  1    528.8      126    7931.3; 461.8-551.8
--   write 4194304  2    593.1      141   14144.0; 512.3-624.6
--   write 4194304  4    614.9      147   27286.3; 543.3-628.4
--   write 4194304  8    537.0      128   62488.6; 514.9-600.3
--   write 4194304 16    591.5      141  113458.3; 558.8-610.8
--   write 4194304 32    537.7      128  249599.2; 506.6-583.2
--   write 4194304 64    583.6      139  459957.1; 573.8-663.9
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
  l2 = {value = 25276063744, source = "MemTotal of /proc/meminfo on vm, 2026-11-29T17:58:06Z (all of it; the runtime gets less)", kind = "measured"},
  dram_bw = {value = "25.97812959GBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T17:58:06Z: memcpy of 64 KiB to 1024 MiB from memory out of cache, 2 threads at once; bytes moved, read plus written: a copy moves 3 per byte copied below glibc's non-temporal threshold (192 MiB here; glibc.cpu.x86_non_temporal_threshold), 2 at or above it (calib/dram.h); fit t = lat + threads * size * moved / bw: lat 1.8 us, worst residual 10.4%; one thread: 17.8 GB/s moved (lat 0.21 us, worst residual 14.3%)", kind = "measured"},
  ssd = {
    count = {value = 1, source = "the one device that holds /var/tmp (ext4 on /dev/vda) on vm, 2026-11-29T17:58:06Z", kind = "measured"},
    read_bw = {value = "603.5528121MBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T17:58:06Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 26.8 us, op 5.96 us, bw 603.6 MB/s; worst residual 18.1% (4 KiB, qd 64)", kind = "measured"},
    write_bw = {value = "616.554851MBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T17:58:06Z: O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 38.3 us (the profile has one ssd.lat, the reads'), op 7.83 us, bw 616.6 MB/s; worst residual 30.4% (16 KiB, qd 64)", kind = "measured"},
    lat = {value = "26.82021501us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T17:58:06Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 26.8 us, op 5.96 us, bw 603.6 MB/s; worst residual 18.1% (4 KiB, qd 64)", kind = "measured"},
    read_op_time = {value = "5.956458794us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T17:58:06Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 26.8 us, op 5.96 us, bw 603.6 MB/s; worst residual 18.1% (4 KiB, qd 64)", kind = "measured"},
    write_op_time = {value = "7.831058335us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T17:58:06Z: O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 38.3 us (the profile has one ssd.lat, the reads'), op 7.83 us, bw 616.6 MB/s; worst residual 30.4% (16 KiB, qd 64)", kind = "measured"},
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
