-- devvm_xeon_host.lua - measured host profile, written by kvstrata calib host.
-- Command: kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_xeon_host.lua --json
-- Machine: vm, Intel(R) Xeon(R) Processor, 2 cores; --dir on ext4 on /dev/vda; 2026-12-06T04:28:59Z
-- DRAM fit (all cores): lat 0.495 us, bw 42.59 GB/s moved (3 or 2 bytes per byte copied, calib/dram.h), worst residual 5.2%
-- SSD read fit: lat 13 us, op 4.69 us, bw 2020 MB/s, worst residual 23.4%
-- SSD write fit: lat 13.4 us, op 9 us, bw 3111 MB/s, worst residual 48.3%
-- Wake-ups (idle s: median us, P10-P90 us, samples): 0.0001: 3.8, 3.7-4.4, 200; 0.001: 141.7, 12.2-187.6, 200; 0.01: 145.9, 132.8-197.6, 60; 0.1: 154.0, 129.2-208.8, 20
-- Measured SSD points (op bytes qd MB/s IOPS us/request; slowest-fastest window MB/s):
--   read     4096  1    198.9    48558      20.6; 164.0-252.7
--   read     4096  2    362.6    88526      22.6; 247.3-370.0
--   read     4096  4    384.8    93952      42.6; 362.6-436.1
--   read     4096  8    447.8   109322      73.2; 440.8-504.3
--   read     4096 16    569.8   139108     115.0; 532.9-577.3
--   read     4096 32    553.7   135175     236.7; 543.2-597.3
--   read     4096 64    562.6   137363     465.9; 544.3-580.7
--   read    16384  1    557.6    34036      29.4; 542.5-567.5
--   read    16384  2    816.3    49823      40.1; 734.7-822.9
--   read    16384  4   1026.9    62678      63.8; 943.3-1049.7
--   read    16384  8   1191.3    72714     110.0; 1138.1-1210.7
--   read    16384 16   1306.1    79719     200.7; 1293.1-1332.3
--   read    16384 32   1133.8    69200     462.4; 1049.6-1206.2
--   read    16384 64   1267.2    77344     827.5; 1147.5-1298.6
--   read    65536  1   1181.2    18023      55.5; 1141.5-1194.7
--   read    65536  2   1606.6    24515      81.6; 1572.0-1627.4
--   read    65536  4   1794.4    27380     146.1; 1711.7-1830.7
--   read    65536  8   1636.9    24978     320.3; 1265.1-1754.2
--   read    65536 16   1755.3    26784     597.4; 1708.0-1794.9
--   read    65536 32   1833.2    27973    1144.0; 1803.4-1894.2
--   read    65536 64   1807.4    27579    2320.6; 1791.6-1809.2
--   read   262144  1   2070.5     7898     126.6; 1948.3-2145.2
--   read   262144  2   1536.2     5860     341.3; 1492.7-1753.5
--   read   262144  4   2031.9     7751     516.0; 2005.8-2047.9
--   read   262144  8   2080.2     7935    1008.2; 2014.0-2095.5
--   read   262144 16   2096.5     7997    2000.6; 2079.2-2167.5
--   read   262144 32   2183.9     8331    3841.1; 2127.8-2232.4
--   read   262144 64   2046.0     7805    8199.9; 2034.6-2122.7
--   read  1048576  1   2026.4     1933     517.5; 1701.0-2126.6
--   read  1048576  2   2091.2     1994    1002.8; 2019.2-2190.4
--   read  1048576  4   2108.7     2011    1989.0; 2057.6-2111.5
--   read  1048576  8   2047.1     1952    4097.8; 2028.8-2049.1
--   read  1048576 16   2020.1     1927    8305.2; 1781.5-2048.0
--   read  1048576 32   1823.5     1739   18401.4; 1760.5-1921.6
--   read  1048576 64   1638.4     1562   40960.6; 1596.6-1711.6
--   read  4194304  1   2018.6      481    2077.8; 1877.3-2056.9
--   read  4194304  2   2030.6      484    4131.1; 1965.3-2142.3
--   read  4194304  4   1976.3      471    8489.2; 1954.4-2007.6
--   read  4194304  8   1878.0      448   17867.0; 1850.5-1923.2
--   read  4194304 16   1675.2      399   40061.3; 1635.8-1790.0
--   read  4194304 32   1543.6      368   86952.2; 1513.5-1611.3
--   read  4194304 64   1545.9      369  173638.0; 1508.0-1608.2
--   write    4096  1    152.0    37118      26.9; 148.6-162.3
--   write    4096  2    243.9    59555      33.6; 235.2-250.5
--   write    4096  4    293.1    71566      55.9; 283.0-335.2
--   write    4096  8    412.3   100669      79.5; 407.6-421.0
--   write    4096 16    473.5   115595     138.4; 423.2-525.7
--   write    4096 32    236.3    57681     554.8; 224.0-254.2
--   write    4096 64    307.3    75029     853.0; 306.9-313.9
--   write   16384  1    555.6    33911      29.5; 505.7-573.6
--   write   16384  2    845.1    51579      38.8; 808.5-850.6
--   write   16384  4   1015.2    61965      64.6; 967.3-1053.5
--   write   16384  8   1168.6    71323     112.2; 970.2-1210.8
--   write   16384 16    560.8    34227     467.5; 516.1-715.4
--   write   16384 32    735.4    44887     712.9; 718.2-757.4
--   write   16384 64   1165.8    71153     899.5; 1072.9-1220.9
--   write   65536  1   1452.7    22167      45.1; 1408.8-1494.3
--   write   65536  2   1874.5    28603      69.9; 1828.7-1898.5
--   write   65536  4   2027.6    30938     129.3; 1562.1-2049.2
--   write   65536  8   1113.0    16984     471.0; 1084.3-1311.1
--   write   65536 16   1934.9    29524     541.9; 1769.0-2083.4
--   write   65536 32   2287.6    34906     916.7; 2226.2-2444.6
--   write   65536 64   2253.1    34380    1861.5; 2186.9-2373.4
--   write  262144  1   2591.6     9886     101.2; 2442.1-2661.2
--   write  262144  2   2818.9    10753     186.0; 2425.6-3199.8
--   write  262144  4   2758.6    10523     380.1; 2736.2-2825.7
--   write  262144  8   3118.2    11895     672.6; 3060.4-3181.8
--   write  262144 16   3120.9    11905    1343.9; 3054.8-3164.3
--   write  262144 32   3140.2    11979    2671.4; 3083.6-3209.1
--   write  262144 64   3108.8    11859    5396.6; 3071.4-3309.8
--   write 1048576  1   1546.7     1475     678.0; 1389.5-1595.6
--   write 1048576  2   3109.9     2966     674.4; 3008.4-3141.6
--   write 1048576  4   3111.5     2967    1348.0; 3076.3-3149.5
--   write 1048576  8   3156.1     3010    2657.9; 3024.4-3200.5
--   write 1048576 16   3185.4     3038    5266.9; 3126.9-3254.3
--   write 1048576 32   3023.6     2884   11097.5; 2888.3-3112.4
--   write 1048576 64   2933.1     2797   22879.7; 2803.5-3015.6
--   write 4194304  1   2516.6      600    1666.7; 2463.0-2888.6
--   write 4194304  2   3172.5      756    2644.1; 3165.8-3180.6
--   write 4194304  4   3190.6      761    5258.4; 3128.9-3228.5
--   write 4194304  8   3170.4      756   10583.6; 3136.4-3211.6
--   write 4194304 16   2803.9      668   23934.4; 2780.4-2917.5
--   write 4194304 32   2726.0      650   49236.6; 2706.7-2773.5
--   write 4194304 64   2589.1      617  103677.8; 2462.6-2655.1
return {
  name = "devvm_xeon_host",
  part = "host vm (Intel(R) Xeon(R) Processor, 2 cores, 24 GiB), drive ext4 on /dev/vda; GPU figures from /work/main/calib/profiles/h200_sxm_pcie5.lua",
  notes = "host figures measured by kvstrata calib host (kind \"measured\"); every other figure is the base profile's, with its own source and kind",
  cpu = "Intel(R) Xeon(R) Processor", -- /proc/cpuinfo's model name: added by hand: the CPU this file's header names (calib host writes `cpu` from 2026-12-06 on)
  hbm_bytes = {value = "143771MiB", source = "what CUDA and nvidia-smi report on an H200 SXM: memory.total 143771 MiB (150.75e9 B; the datasheet's 141 GB is about 140.4 GiB), as printed by nvidia-smi on 8xH200 nodes in several public logs found with the project's code search (2026-12-01); the capacity serving engines divide (SGLang's mem_fraction_static, vLLM's gpu_memory_utilization are shares of it)", kind = "measured (published)"},
  hbm_bw = {value = "4.296TBps", source = "`kvstrata calib gpu` on a lent H200 SXM (PCIe Gen5 x16, driver 580.159.04, in a Firecracker VM with 16 Xeon vCPUs), 2026-12-04 (results/device/2026-12-04_h200/calib_gpu.lua): one kernel reading 1 GiB of device memory once (16-byte loads, grid-stride), timed with events, median of 21: what a memory-bound decode reads its weights and KV at; the datasheet gives 4.8 TB/s (NVIDIA H200 Tensor Core GPU datasheet, H200 SXM), a device-to-device copy moved 4.108 TB/s read + written", kind = "measured"},
  pcie_bw = {value = "54.2GBps", source = "`kvstrata calib gpu` on a lent H200 SXM (PCIe Gen5 x16, driver 580.159.04, in a Firecracker VM with 16 Xeon vCPUs), 2026-12-04 (results/device/2026-12-04_h200/calib_gpu.lua): pinned host-to-device cudaMemcpyAsync + stream sync, 4 KiB to 64 MiB, fit t = overhead + size / bw (54.20 GB/s, 8.55 us); device-to-host 55.12 GB/s. The vLLM blog post on KV-cache offloading (2025-12) gave ~50 GB/s on an H100 Gen5", kind = "measured"},
  pcie_lat = {value = "0s", source = "`kvstrata calib gpu` on a lent H200 SXM (PCIe Gen5 x16, driver 580.159.04, in a Firecracker VM with 16 Xeon vCPUs), 2026-12-04 (results/device/2026-12-04_h200/calib_gpu.lua): 0, its part of a copy's fixed cost is in copy_overhead (calib gpu's fit)", kind = "measured"},
  copy_overhead = {value = "8.14us", source = "`kvstrata calib gpu` on a lent H200 SXM (PCIe Gen5 x16, driver 580.159.04, in a Firecracker VM with 16 Xeon vCPUs), 2026-12-04 (results/device/2026-12-04_h200/calib_gpu.lua): intercept of one batched copy call (cudaMemcpyBatchAsync) + stream sync moving 1 to 32 pinned host blocks of 128 KiB to the device, fit t = overhead + bytes / bw (8.139 us, 40.38 GB/s, worst residual 1.8%); device to host 6.217 us. DualPath (arXiv 2602.21548, sec. 5.2) gives 5-7 us per cudaMemcpyAsync", kind = "measured"},
  copy_item_h2d = {value = "2.52us", source = "`kvstrata calib gpu` on a lent H200 SXM (PCIe Gen5 x16, driver 580.159.04, in a Firecracker VM with 16 Xeon vCPUs), 2026-12-04 (results/device/2026-12-04_h200/calib_gpu.lua): one cudaMemcpyAsync per 656 B item host-to-device between scattered places of pinned host memory and the device, 256 to 16384 items and one stream sync, the fit's slope (2.517 us; worst residual 0.9%). ESS (arXiv 2512.10576, PUBLISHED.md section 2) measured 0.79 GB/s, 0.83 us an item, on its machine", kind = "measured"},
  copy_item_d2h = {value = "1.77us", source = "`kvstrata calib gpu` on a lent H200 SXM (PCIe Gen5 x16, driver 580.159.04, in a Firecracker VM with 16 Xeon vCPUs), 2026-12-04 (results/device/2026-12-04_h200/calib_gpu.lua): the same, device-to-host (1.768 us; worst residual 11.9%). ESS measured 0.23 GB/s, 2.85 us an item", kind = "measured"},
  gather_h2d_bw = {value = "46.4GBps", source = "`kvstrata calib gpu` on a lent H200 SXM (PCIe Gen5 x16, driver 580.159.04, in a Firecracker VM with 16 Xeon vCPUs), 2026-12-04 (results/device/2026-12-04_h200/calib_gpu.lua): one kernel, a warp per 656 B item, 16-byte loads through mapped pinned host memory, 256 to 16384 items a launch, the fit's rate (46.44 GB/s, intercept 12.1 us, worst residual 0.9%). ESS measured 37 GB/s with its FlashTrans kernel", kind = "measured"},
  gather_d2h_bw = {value = "49.3GBps", source = "`kvstrata calib gpu` on a lent H200 SXM (PCIe Gen5 x16, driver 580.159.04, in a Firecracker VM with 16 Xeon vCPUs), 2026-12-04 (results/device/2026-12-04_h200/calib_gpu.lua): the same kernel storing into mapped host memory (49.32 GB/s, intercept 10.8 us, worst residual 2.8%). ESS measured 43 GB/s", kind = "measured"},
  host_read_lat = {value = "1.19us", source = "`kvstrata calib gpu` on a lent H200 SXM (PCIe Gen5 x16, driver 580.159.04, in a Firecracker VM with 16 Xeon vCPUs), 2026-12-04 (results/device/2026-12-04_h200/calib_gpu.lua): one GPU thread following a chain of dependent 8-byte loads through mapped pinned host memory scattered over 64 MiB, (5.171 ms for 4352 loads - 0.297 ms for 256) / 4096 = 1.190 us; used where a scenario limits a gather kernel's warps per request (cache.gather_warps)", kind = "measured"},
  nvlink_bw = {value = "450GBps", source = "NVIDIA H100 and H200 Tensor Core GPU datasheets, SXM: NVLink 900 GB/s per GPU, both directions together; 450 GB/s per direction", kind = "datasheet"},
  gpus_per_switch = {value = 2, source = "HGX 8-GPU baseboard with two GPUs behind each PCIe switch uplink; not from a measured source", kind = "assumed"},
  l2 = {value = 25324961792, source = "MemTotal of /proc/meminfo on vm, 2026-12-06T04:28:59Z (all of it; the runtime gets less)", kind = "measured"},
  dram_bw = {value = "42.59266729GBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_xeon_host.lua --json` on vm (Intel(R) Xeon(R) Processor, 2 cores), 2026-12-06T04:28:59Z: memcpy of 64 KiB to 1024 MiB from memory out of cache, 2 threads at once; bytes moved, read plus written: a copy moves 3 per byte copied below glibc's non-temporal threshold (114 MiB here; glibc.cpu.x86_non_temporal_threshold), 2 at or above it (calib/dram.h); fit t = lat + threads * size * moved / bw: lat 0.495 us, worst residual 5.2%; one thread: 22.4 GB/s moved (lat 0.559 us, worst residual 5.9%)", kind = "measured"},
  ssd = {
    count = {value = 1, source = "the one device that holds /var/tmp (ext4 on /dev/vda) on vm, 2026-12-06T04:28:59Z", kind = "measured"},
    read_bw = {value = "2.020291504GBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_xeon_host.lua --json` on vm (Intel(R) Xeon(R) Processor, 2 cores), 2026-12-06T04:28:59Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 13 us, op 4.69 us, bw 2020 MB/s; worst residual 23.4% (4096 KiB, qd 32)", kind = "measured"},
    write_bw = {value = "3.111256824GBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_xeon_host.lua --json` on vm (Intel(R) Xeon(R) Processor, 2 cores), 2026-12-06T04:28:59Z: O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 13.4 us (the profile has one ssd.lat, the reads'), op 9 us, bw 3111 MB/s; worst residual 48.3% (16 KiB, qd 16)", kind = "measured"},
    lat = {value = "13.04643602us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_xeon_host.lua --json` on vm (Intel(R) Xeon(R) Processor, 2 cores), 2026-12-06T04:28:59Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 13 us, op 4.69 us, bw 2020 MB/s; worst residual 23.4% (4096 KiB, qd 32)", kind = "measured"},
    read_op_time = {value = "4.689485603us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_xeon_host.lua --json` on vm (Intel(R) Xeon(R) Processor, 2 cores), 2026-12-06T04:28:59Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 13 us, op 4.69 us, bw 2020 MB/s; worst residual 23.4% (4096 KiB, qd 32)", kind = "measured"},
    write_op_time = {value = "8.995193506us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_xeon_host.lua --json` on vm (Intel(R) Xeon(R) Processor, 2 cores), 2026-12-06T04:28:59Z: O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 13.4 us (the profile has one ssd.lat, the reads'), op 9 us, bw 3111 MB/s; worst residual 48.3% (16 KiB, qd 16)", kind = "measured"},
  },
  network = {
    topology = {value = "fat_tree", source = "a fat-tree cluster network is the common choice; not a measured figure", kind = "assumed"},
    bw = {value = "190GBps", source = "Mooncake transfer engine over 8 x 400 Gbps RoCE: ~190 GB/s, measured and published by the Mooncake project (document and URL not recorded)", kind = "measured (published)"},
    lat = {value = "5us", source = "no published figure at hand; order of an RDMA one-way latency", kind = "assumed"},
  },
  flops = {value = "990TFLOPS", source = "NVIDIA H100 and H200 Tensor Core GPU datasheets, SXM: dense BF16 Tensor Core ~990 TFLOP/s", kind = "datasheet"},
  flops_fp8 = {value = "1979TFLOPS", source = "NVIDIA H100 and H200 Tensor Core GPU datasheets, SXM: FP8 Tensor Core 3,958 TFLOP/s with 2:4 sparsity, 1,979 dense", kind = "datasheet"},
  sched_overhead = {value = "50us", source = "no published figure at hand; host-side batch scheduling per decode step of a C++ runtime with CUDA graphs, order of tens of microseconds", kind = "assumed"},
  table_rebuild = {value = "10us", source = "no published figure at hand; one small host-to-device copy of the resident-block pointer table plus its launch, about one copy_overhead", kind = "assumed"},
  prefill_efficiency = {value = 0.5, source = "no measured figure at hand; long-context prefill reaches about half of the dense peak once attention dominates", kind = "assumed"},
  host_wake = {idle = {0.0001, 0.001, 0.01, 0.1}, seconds = {3.834e-06, 0.0001417, 0.0001459, 0.000154}, source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_xeon_host.lua --json` on vm (Intel(R) Xeon(R) Processor, 2 cores), 2026-12-06T04:28:59Z: a thread waiting in pthread_cond_wait for the idle time, then signalled (pthread_cond_broadcast under the mutex, right after storing the time) by a thread that spins meanwhile; seconds from the signal to the waiter's first clock read after the wait returns (CLOCK_MONOTONIC), median per idle time (calib/wake.h); per point, idle: samples, P10-P90: 0.0001 s: 200, 3.7-4.4 us; 0.001 s: 200, 12.2-187.6 us; 0.01 s: 60, 132.8-197.6 us; 0.1 s: 20, 129.2-208.8 us", kind = "measured"},
}
