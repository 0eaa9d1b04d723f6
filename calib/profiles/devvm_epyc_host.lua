-- devvm_epyc_host.lua - measured host profile, written by kvstrata calib host.
-- Command: kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua --json
-- Machine: vm, AMD EPYC, 2 cores; --dir on ext4 on /dev/vda; 2026-11-29T19:17:20Z
-- DRAM fit (all cores): lat 0 us, bw 28.28 GB/s moved (3 or 2 bytes per byte copied, calib/dram.h), worst residual 10.6%
-- SSD read fit: lat 32.5 us, op 6.45 us, bw 670.1 MB/s, worst residual 29.2%
-- SSD write fit: lat 32.8 us, op 6.98 us, bw 756.2 MB/s, worst residual 28.4%
-- Wake-ups (idle s: median us, P10-P90 us, samples): 0.0001: 7.3, 6.8-8.2, 200; 0.001: 27.4, 21.5-38.9, 200; 0.01: 79.5, 49.1-102.0, 60; 0.1: 64.8, 43.9-125.0, 20
-- Measured SSD points (op bytes qd MB/s IOPS us/request; slowest-fastest window MB/s):
--   read     4096  1     90.6    22125      45.2; 0.1-100.9
--   read     4096  2    159.3    38890      51.4; 66.6-169.1
--   read     4096  4    183.2    44724      89.4; 179.6-198.9
--   read     4096  8    226.3    55238     144.8; 52.8-270.7
--   read     4096 16    255.9    62476     256.1; 52.0-278.9
--   read     4096 32    292.6    71436     448.0; 276.4-302.3
--   read     4096 64    347.3    84788     754.8; 134.3-371.5
--   read    16384  1    235.4    14370      69.6; 96.7-282.1
--   read    16384  2    378.1    23075      86.7; 367.5-398.8
--   read    16384  4    363.6    22192     180.2; 115.1-383.6
--   read    16384  8    405.2    24730     323.5; 260.8-446.6
--   read    16384 16    480.5    29324     545.6; 445.6-523.3
--   read    16384 32    494.1    30157    1061.1; 479.5-506.0
--   read    16384 64    608.2    37120    1724.2; 555.6-649.9
--   read    65536  1    458.2     6991     143.0; 375.3-504.4
--   read    65536  2    630.9     9626     207.8; 546.9-665.2
--   read    65536  4    554.4     8459     472.9; 538.2-567.5
--   read    65536  8    587.6     8966     892.2; 585.6-608.2
--   read    65536 16    642.1     9797    1633.1; 588.6-901.4
--   read    65536 32    681.1    10392    3079.2; 651.5-867.8
--   read    65536 64    635.6     9698    6599.2; 616.0-665.5
--   read   262144  1    612.7     2337     427.8; 610.6-636.7
--   read   262144  2    688.5     2627     761.5; 653.7-691.8
--   read   262144  4    725.4     2767    1445.5; 712.9-732.5
--   read   262144  8    692.5     2642    3028.5; 642.2-719.9
--   read   262144 16    657.4     2508    6379.8; 604.3-668.0
--   read   262144 32    654.5     2497   12817.5; 608.2-796.5
--   read   262144 64    789.5     3012   21250.2; 760.7-792.2
--   read  1048576  1    844.8      806    1241.2; 711.0-852.5
--   read  1048576  2    606.5      578    3457.8; 599.8-655.9
--   read  1048576  4    615.7      587    6812.5; 610.3-631.6
--   read  1048576  8    607.9      580   13799.8; 599.0-807.7
--   read  1048576 16    607.8      580   27605.0; 582.8-615.2
--   read  1048576 32    598.0      570   56111.7; 572.8-614.5
--   read  1048576 64    614.6      586  109190.7; 552.0-665.3
--   read  4194304  1    586.6      140    7150.7; 577.9-596.4
--   read  4194304  2    612.3      146   13699.6; 577.9-687.1
--   read  4194304  4    588.5      140   28508.5; 564.2-622.8
--   read  4194304  8    580.8      138   57772.5; 563.3-609.9
--   read  4194304 16    584.7      139  114775.8; 564.5-723.5
--   read  4194304 32    599.0      143  224055.9; 593.9-806.6
--   read  4194304 64    681.9      163  393630.4; 598.5-698.4
--   write    4096  1     90.0    21984      45.5; 77.9-94.0
--   write    4096  2    147.9    36119      55.4; 116.9-150.5
--   write    4096  4    201.4    49165      81.4; 189.2-209.3
--   write    4096  8    243.4    59427     134.6; 200.4-245.6
--   write    4096 16    244.6    59709     268.0; 220.3-260.7
--   write    4096 32    258.8    63187     506.4; 249.8-276.1
--   write    4096 64    320.4    78215     818.3; 309.6-347.1
--   write   16384  1    252.4    15405      64.9; 237.3-258.3
--   write   16384  2    349.8    21352      93.7; 329.5-398.1
--   write   16384  4    485.9    29660     134.9; 447.2-567.1
--   write   16384  8    492.5    30059     266.1; 418.9-543.4
--   write   16384 16    467.5    28531     560.8; 454.7-542.4
--   write   16384 32    620.7    37884     844.7; 589.0-666.4
--   write   16384 64    721.8    44054    1452.8; 697.0-794.4
--   write   65536  1    538.2     8212     121.8; 517.8-545.7
--   write   65536  2    641.2     9785     204.4; 627.0-675.2
--   write   65536  4    612.2     9341     428.2; 592.4-685.9
--   write   65536  8    686.2    10471     764.0; 659.8-697.6
--   write   65536 16    797.4    12168    1315.0; 765.5-829.5
--   write   65536 32    719.6    10981    2914.2; 622.4-771.0
--   write   65536 64    585.1     8927    7169.1; 526.4-701.8
--   write  262144  1    608.1     2320     431.1; 562.1-729.5
--   write  262144  2    771.9     2944     679.3; 694.2-778.4
--   write  262144  4    827.7     3158    1266.8; 794.6-865.3
--   write  262144  8    661.4     2523    3171.0; 589.9-798.5
--   write  262144 16    754.3     2877    5560.5; 643.1-827.4
--   write  262144 32    786.1     2999   10670.7; 710.2-837.7
--   write  262144 64    697.8     2662   24041.6; 684.1-728.0
--   write 1048576  1    720.1      687    1456.2; 595.8-789.9
--   write 1048576  2    702.3      670    2986.0; 622.9-730.3
--   write 1048576  4    730.6      697    5741.3; 689.1-735.9
--   write 1048576  8    755.9      721   11097.6; 717.9-814.8
--   write 1048576 16    611.3      583   27445.6; 596.0-698.8
--   write 1048576 32    732.4      698   45814.1; 699.2-739.5
--   write 1048576 64    738.9      705   90820.8; 732.0-784.3
--   write 4194304  1    748.4      178    5604.2; 689.3-918.0
--   write 4194304  2    743.4      177   11283.7; 714.6-842.2
--   write 4194304  4    740.5      177   22657.8; 737.0-759.4
--   write 4194304  8    744.3      177   45083.4; 725.2-772.5
--   write 4194304 16    717.9      171   93484.0; 650.6-802.3
--   write 4194304 32    710.2      169  188977.3; 694.9-851.2
--   write 4194304 64    695.7      166  385848.3; 663.2-749.7
return {
  name = "devvm_epyc_host",
  part = "host vm (AMD EPYC, 2 cores, 24 GiB), drive ext4 on /dev/vda; GPU figures from /work/main/calib/profiles/h200_sxm_pcie5.lua",
  notes = "host figures measured by kvstrata calib host (kind \"measured\"); every other figure is the base profile's, with its own source and kind",
  cpu = "AMD EPYC", -- /proc/cpuinfo's model name: added by hand on 2026-12-06: the CPU this file's header names (calib host wrote it there; it writes `cpu` since)
  hbm_bytes = {value = "141GB", source = "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: 141 GB HBM3e", kind = "datasheet"},
  hbm_bw = {value = "4.8TBps", source = "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: 4.8 TB/s", kind = "datasheet"},
  pcie_bw = {value = "50GBps", source = "PCIe Gen5 x16 on an H100, large copies, one direction: ~50 GB/s (~83 GB/s both directions at once through the copy engine); vLLM blog post on KV-cache offloading, 2025-12 (title and URL not recorded)", kind = "measured (published)"},
  pcie_lat = {value = "1us", source = "no published figure at hand; order of a PCIe round trip (the per-copy cost is copy_overhead)", kind = "assumed"},
  copy_overhead = {value = "6us", source = "DualPath (arXiv 2602.21548, https://arxiv.org/abs/2602.21548), sec. 5.2: a fixed cost of 5-7 us per cudaMemcpyAsync; the middle taken", kind = "measured (published)"},
  nvlink_bw = {value = "450GBps", source = "NVIDIA H100 and H200 Tensor Core GPU datasheets, SXM: NVLink 900 GB/s per GPU, both directions together; 450 GB/s per direction", kind = "datasheet"},
  gpus_per_switch = {value = 2, source = "HGX 8-GPU baseboard with two GPUs behind each PCIe switch uplink; not from a measured source", kind = "assumed"},
  l2 = {value = 25276063744, source = "MemTotal of /proc/meminfo on vm, 2026-11-29T19:17:20Z (all of it; the runtime gets less)", kind = "measured"},
  dram_bw = {value = "28.28169125GBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua --json` on vm (AMD EPYC, 2 cores), 2026-11-29T19:17:20Z: memcpy of 64 KiB to 1024 MiB from memory out of cache, 2 threads at once; bytes moved, read plus written: a copy moves 3 per byte copied below glibc's non-temporal threshold (192 MiB here; glibc.cpu.x86_non_temporal_threshold), 2 at or above it (calib/dram.h); fit t = lat + threads * size * moved / bw: lat 0 us, worst residual 10.6%; one thread: 18.5 GB/s moved (lat 0 us, worst residual 4.0%)", kind = "measured"},
  ssd = {
    count = {value = 1, source = "the one device that holds /var/tmp (ext4 on /dev/vda) on vm, 2026-11-29T19:17:20Z", kind = "measured"},
    read_bw = {value = "670.0863722MBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua --json` on vm (AMD EPYC, 2 cores), 2026-11-29T19:17:20Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 32.5 us, op 6.45 us, bw 670.1 MB/s; worst residual 29.2% (1024 KiB, qd 1)", kind = "measured"},
    write_bw = {value = "756.174225MBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua --json` on vm (AMD EPYC, 2 cores), 2026-11-29T19:17:20Z: O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 32.8 us (the profile has one ssd.lat, the reads'), op 6.98 us, bw 756.2 MB/s; worst residual 28.4% (16 KiB, qd 64)", kind = "measured"},
    lat = {value = "32.53030077us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua --json` on vm (AMD EPYC, 2 cores), 2026-11-29T19:17:20Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 32.5 us, op 6.45 us, bw 670.1 MB/s; worst residual 29.2% (1024 KiB, qd 1)", kind = "measured"},
    read_op_time = {value = "6.445784131us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua --json` on vm (AMD EPYC, 2 cores), 2026-11-29T19:17:20Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 32.5 us, op 6.45 us, bw 670.1 MB/s; worst residual 29.2% (1024 KiB, qd 1)", kind = "measured"},
    write_op_time = {value = "6.975396524us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua --json` on vm (AMD EPYC, 2 cores), 2026-11-29T19:17:20Z: O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 32.8 us (the profile has one ssd.lat, the reads'), op 6.98 us, bw 756.2 MB/s; worst residual 28.4% (16 KiB, qd 64)", kind = "measured"},
  },
  network = {
    topology = {value = "fat_tree", source = "a fat-tree cluster network is the common choice; not a measured figure", kind = "assumed"},
    bw = {value = "190GBps", source = "Mooncake transfer engine over 8 x 400 Gbps RoCE: ~190 GB/s, measured and published by the Mooncake project (document and URL not recorded)", kind = "measured (published)"},
    lat = {value = "5us", source = "no published figure at hand; order of an RDMA one-way latency", kind = "assumed"},
  },
  flops = {value = "990TFLOPS", source = "NVIDIA H100 and H200 Tensor Core GPU datasheets, SXM: dense BF16 Tensor Core ~990 TFLOP/s", kind = "datasheet"},
  sched_overhead = {value = "50us", source = "no published figure at hand; host-side batch scheduling per decode step of a C++ runtime with CUDA graphs, order of tens of microseconds", kind = "assumed"},
  table_rebuild = {value = "10us", source = "no published figure at hand; one small host-to-device copy of the resident-block pointer table plus its launch, about one copy_overhead", kind = "assumed"},
  prefill_efficiency = {value = 0.5, source = "no measured figure at hand; long-context prefill reaches about half of the dense peak once attention dominates", kind = "assumed"},
  host_wake = {idle = {0.0001, 0.001, 0.01, 0.1}, seconds = {7.259e-06, 2.741e-05, 7.952e-05, 6.484e-05}, source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua --json` on vm (AMD EPYC, 2 cores), 2026-11-29T19:17:20Z: a thread waiting in pthread_cond_wait for the idle time, then signalled (pthread_cond_broadcast under the mutex, right after storing the time) by a thread that spins meanwhile; seconds from the signal to the waiter's first clock read after the wait returns (CLOCK_MONOTONIC), median per idle time (calib/wake.h); per point, idle: samples, P10-P90: 0.0001 s: 200, 6.8-8.2 us; 0.001 s: 200, 21.5-38.9 us; 0.01 s: 60, 49.1-102.0 us; 0.1 s: 20, 43.9-125.0 us", kind = "measured"},
}
