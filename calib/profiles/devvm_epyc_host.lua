-- devvm_epyc_host.lua - measured host profile, written by kvstrata calib host.
-- Command: kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua
-- Machine: vm, AMD EPYC, 2 cores; --dir on ext4 on /dev/vda; 2026-11-29T13:37:28Z
-- DRAM fit (all cores): lat 0 us, bw 7.89 GB/s, worst residual 37.0%
-- SSD read fit: lat 61.1 us, op 5.34 us, bw 461.1 MB/s, worst residual 94.2%
-- SSD write fit: lat 73.8 us, op 14.2 us, bw 511.4 MB/s, worst residual 32.9%
-- Measured SSD points (op bytes qd MB/s IOPS us/request):
--   read     4096  1     54.5    13309      75.1
--   read     4096  2     99.5    24302      82.3
--   read     4096  4      8.0     1953    2048.3
--   read     4096  8    185.4    45273     176.7
--   read     4096 16    199.3    48667     328.8
--   read     4096 32    246.4    60161     531.9
--   read     4096 64    296.4    72362     884.4
--   read    16384  1     12.1      737    1356.0
--   read    16384  2    216.4    13210     151.4
--   read    16384  4    269.6    16458     243.0
--   read    16384  8    316.0    19290     414.7
--   read    16384 16    431.7    26348     607.3
--   read    16384 32    150.6     9194    3480.4
--   read    16384 64    385.1    23503    2723.0
--   read    65536  1    301.0     4593     217.7
--   read    65536  2    416.9     6361     314.4
--   read    65536  4    640.3     9770     409.4
--   read    65536  8    265.3     4048    1976.3
--   read    65536 16    508.5     7759    2062.0
--   read    65536 32    505.6     7715    4148.0
--   read    65536 64    398.7     6084   10520.1
--   read   262144  1    341.5     1303     767.7
--   read   262144  2    354.0     1350    1481.2
--   read   262144  4    357.3     1363    2934.6
--   read   262144  8    551.3     2103    3803.9
--   read   262144 16    398.5     1520   10524.2
--   read   262144 32    381.2     1454   22004.6
--   read   262144 64    432.8     1651   38762.9
--   read  1048576  1    380.7      363    2754.0
--   read  1048576  2    532.2      508    3940.5
--   read  1048576  4    380.0      362   11037.8
--   read  1048576  8    433.5      413   19352.1
--   read  1048576 16    399.4      381   42010.9
--   read  1048576 32    486.4      464   68985.0
--   read  1048576 64    381.9      364  175708.4
--   read  4194304  1    357.3       85   11737.5
--   read  4194304  2    407.1       97   20605.0
--   read  4194304  4    385.4       92   43529.9
--   read  4194304  8    388.6       93   86347.6
--   read  4194304 16    383.7       91  174877.6
--   read  4194304 32    638.0      152  210380.1
--   read  4194304 64    507.7      121  528690.3
--   write    4096  1     45.5    11100      90.1
--   write    4096  2     81.1    19807     101.0
--   write    4096  4    105.6    25776     155.2
--   write    4096  8    131.6    32131     249.0
--   write    4096 16    150.9    36844     434.3
--   write    4096 32    167.8    40979     780.9
--   write    4096 64    179.3    43773    1462.1
--   write   16384  1    128.5     7845     127.5
--   write   16384  2    195.0    11899     168.1
--   write   16384  4    206.3    12589     317.7
--   write   16384  8    259.4    15835     505.2
--   write   16384 16    252.7    15426    1037.2
--   write   16384 32    312.9    19099    1675.5
--   write   16384 64    405.0    24722    2588.8
--   write   65536  1    219.5     3350     298.5
--   write   65536  2    361.8     5520     362.3
--   write   65536  4    350.7     5351     747.5
--   write   65536  8    381.7     5824    1373.5
--   write   65536 16    461.3     7039    2272.9
--   write   65536 32    501.7     7655    4180.0
--   write   65536 64    456.2     6961    9193.7
--   write  262144  1    468.9     1789     559.1
--   write  262144  2    400.2     1527    1310.2
--   write  262144  4    506.4     1932    2070.6
--   write  262144  8    457.9     1747    4579.8
--   write  262144 16    443.7     1692    9453.7
--   write  262144 32    473.9     1808   17700.2
--   write  262144 64    659.8     2517   25428.6
--   write 1048576  1    370.2      353    2832.1
--   write 1048576  2    530.7      506    3951.9
--   write 1048576  4    579.0      552    7243.7
--   write 1048576  8    605.1      577   13863.1
--   write 1048576 16    502.0      479   33419.0
--   write 1048576 32    486.2      464   69018.5
--   write 1048576 64    560.3      534  119764.3
--   write 4194304  1    427.0      102    9822.1
--   write 4194304  2    531.7      127   15777.6
--   write 4194304  4    419.0      100   40042.0
--   write 4194304  8    413.7       99   81101.9
--   write 4194304 16    473.7      113  141662.4
--   write 4194304 32    562.2      134  238753.4
--   write 4194304 64    523.1      125  513179.7
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
  l2 = {value = 25276063744, source = "MemTotal of /proc/meminfo on vm, 2026-11-29T13:37:28Z (all of it; the runtime gets less)", kind = "measured"},
  dram_bw = {value = "7.889886247GBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T13:37:28Z: memcpy of 64 KiB to 1024 MiB from memory out of cache, 2 threads at once, bytes copied per second (memory traffic is twice that); fit t = lat + threads * size / bw: lat 0 us, worst residual 37.0%; one thread: 6.38 GB/s (lat 1.72 us, worst residual 30.9%)", kind = "measured"},
  ssd = {
    count = {value = 1, source = "the one device that holds /var/tmp (ext4 on /dev/vda) on vm, 2026-11-29T13:37:28Z", kind = "measured"},
    read_bw = {value = "461.0808555MBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T13:37:28Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 61.1 us, op 5.34 us, bw 461.1 MB/s; worst residual 94.2% (4 KiB, qd 4)", kind = "measured"},
    write_bw = {value = "511.3818953MBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T13:37:28Z: O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 73.8 us (the profile has one ssd.lat, the reads'), op 14.2 us, bw 511.4 MB/s; worst residual 32.9% (256 KiB, qd 64)", kind = "measured"},
    lat = {value = "61.0593959us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T13:37:28Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 61.1 us, op 5.34 us, bw 461.1 MB/s; worst residual 94.2% (4 KiB, qd 4)", kind = "measured"},
    read_op_time = {value = "5.343931703us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T13:37:28Z: O_DIRECT random reads through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 61.1 us, op 5.34 us, bw 461.1 MB/s; worst residual 94.2% (4 KiB, qd 4)", kind = "measured"},
    write_op_time = {value = "14.15568518us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T13:37:28Z: O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64, on a 1024 MiB file in /var/tmp (ext4 on /dev/vda); fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 73.8 us (the profile has one ssd.lat, the reads'), op 14.2 us, bw 511.4 MB/s; worst residual 32.9% (256 KiB, qd 64)", kind = "measured"},
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
