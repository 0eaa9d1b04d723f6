-- devvm_cpu_runtime.lua - the machine the real runtime runs on in CPU mode
-- (kernels/runtime/runtime.h): this project's development VM (AMD EPYC, 2 vCPUs).
-- The runtime's "GPU" is the CPU: L1 and L2 are RAM arenas, L1 <-> L2 copies
-- are memcpy, L3 is an O_DIRECT file on /var/tmp, and the attention kernel is
-- the C reference sparse decode. So HBM and the host link take the measured
-- DRAM copy figures, the SSD the measured O_DIRECT figures, and the kernel
-- time the measured reference kernel. Scenarios under scenarios/validation/
-- use it with `kvstrata validate`.
return {
  name = "devvm_cpu_runtime",
  part = "host vm (AMD EPYC, 2 cores, 24 GiB) running the CPU runtime; drive ext4 on /dev/vda",
  notes = "measured figures from calib host and bench kernels on this VM; prefill and host costs are set to what the runtime's clock counts of them (nothing)",
  cpu = "AMD EPYC", -- /proc/cpuinfo's model name: the CPU devvm_epyc_host.lua's header names
  hbm_bytes = {value = "64MB", source = "the runtime's L1 arena: a choice of the scenario (platform.hbm_bytes), not a property of the machine", kind = "assumed"},
  hbm_bw = {value = "8.480501854GBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z (devvm_epyc_host.lua): memcpy of 64 KiB to 1024 MiB, 2 threads at once, bytes copied per second; fit lat 5.38 us, worst residual 34.2%: the L1 arena is host DRAM", kind = "measured"},
  pcie_bw = {value = "8.480501854GBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z (devvm_epyc_host.lua): memcpy of 64 KiB to 1024 MiB, 2 threads at once, bytes copied per second; fit lat 5.38 us, worst residual 34.2%: an L1 <-> L2 copy is a memcpy between two RAM arenas", kind = "measured"},
  pcie_lat = {value = "2.94us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z (devvm_epyc_host.lua): one-thread memcpy fit latency 2.94 us", kind = "measured"},
  copy_overhead = {value = "0s", source = "a lane's batch is plain memcpy or io_uring calls: no launch cost beyond pcie_lat (the SSD's own cost is ssd.lat and ssd.*_op_time)", kind = "assumed"},
  nvlink_bw = {value = "8.480501854GBps", source = "one GPU per node in the runtime: NVLink is never used; the DRAM copy figure stands in", kind = "assumed"},
  gpus_per_switch = {value = 1, source = "one GPU per node in the runtime", kind = "assumed"},
  l2 = {value = 25276063744, source = "MemTotal of /proc/meminfo on vm, 2026-11-29T15:23:07Z (devvm_epyc_host.lua)", kind = "measured"},
  dram_bw = {value = "25.97812959GBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T17:58:06Z (devvm_epyc_host.lua): memcpy of 64 KiB to 1024 MiB, 2 threads at once, bytes moved per second (a copy moves 3 per byte copied below glibc's non-temporal threshold, 192 MiB here, and 2 above: calib/dram.h); fit lat 1.8 us, worst residual 10.4%. The other host figures here come from the 15:23 run", kind = "measured"},
  ssd = {
    count = {value = 1, source = "the one device that holds /var/tmp (ext4 on /dev/vda) on vm", kind = "measured"},
    read_bw = {value = "558.4003741MBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z (devvm_epyc_host.lua): O_DIRECT random reads through io_uring into scattered 4 KiB pages, 4 KiB to 4 MiB at queue depths 1 to 64; fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 31.6 us, op 6.91 us, bw 558.4 MB/s, worst residual 23.4%", kind = "measured"},
    write_bw = {value = "645.7709504MBps", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z (devvm_epyc_host.lua): O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64; fit lat 43.3 us, op 8.35 us, bw 645.8 MB/s, worst residual 13.2%", kind = "measured"},
    lat = {value = "31.61206622us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z (devvm_epyc_host.lua): O_DIRECT random reads through io_uring into scattered 4 KiB pages, 4 KiB to 4 MiB at queue depths 1 to 64; fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 31.6 us, op 6.91 us, bw 558.4 MB/s, worst residual 23.4%", kind = "measured"},
    read_op_time = {value = "6.909857119us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z (devvm_epyc_host.lua): O_DIRECT random reads through io_uring into scattered 4 KiB pages, 4 KiB to 4 MiB at queue depths 1 to 64; fit t = lat + qd * op + qd * size / bw (calib/fit.h): lat 31.6 us, op 6.91 us, bw 558.4 MB/s, worst residual 23.4%", kind = "measured"},
    write_op_time = {value = "8.354162238us", source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua` on vm (AMD EPYC, 2 cores), 2026-11-29T15:23:07Z (devvm_epyc_host.lua): O_DIRECT random writes through io_uring, 4 KiB to 4 MiB at queue depths 1 to 64; fit lat 43.3 us, op 8.35 us, bw 645.8 MB/s, worst residual 13.2%", kind = "measured"},
  },
  network = {
    topology = {value = "fat_tree", source = "one node: the network is never used", kind = "assumed"},
    bw = {value = "1GBps", source = "one node: the network is never used", kind = "assumed"},
    lat = {value = "5us", source = "one node: the network is never used", kind = "assumed"},
  },
  flops = {value = "1000000PFLOPS", source = "the runtime writes a prompt's KV with its clock stopped (runtime.h): prefill takes no time in what it measures, so the simulator's must take none either", kind = "assumed"},
  sched_overhead = {value = "0s", source = "the runtime's host work per step (cache-manager calls, locating the selected blocks) is not measured apart; its cost is part of the validation error", kind = "assumed"},
  table_rebuild = {value = "0s", source = "the CPU runtime mends its resident-pointer table entry by entry (a block that moved is located afresh before its read, kernels/runtime/runtime.h); that work is inside its measured step time, under 1% of it in results/fidelity, and not charged as a rebuild", kind = "assumed"},
  prefill_efficiency = {value = 1, source = "prefill is free here (see flops)", kind = "assumed"},
  kernel_time = {
    source = "kvstrata bench kernels --backend ref --kernels sparse --kv-heads 2 --q-heads 8 --head-dim 64 --block-size 16 --context 4096 --blocks 4,8,16,32,64,128,256 --batch 8 --repeat 15 on vm (AMD EPYC), 2026-12-03T18:15:45Z (medians; the reference kernel of 2026-11-29, 15:29, took 4.3 times as long)",
    kind = "measured",
    backend = "ref",
    batch = 8, kv_heads = 2, q_heads = 8, head_dim = 64, block_size = 16, dtype = "fp16",
    blocks = {4, 8, 16, 32, 64, 128, 256},
    seconds = {0.00034801, 0.00067885, 0.00136020, 0.00273708, 0.00548042, 0.01100348, 0.02266382},
  },
  -- the runtime's lanes and decode thread sleep on condition variables (kernels/runtime/runtime.c)
  host_wake = {idle = {0.0001, 0.001, 0.01, 0.1}, seconds = {7.259e-06, 2.741e-05, 7.952e-05, 6.484e-05}, source = "`kvstrata calib host --dir /var/tmp -o calib/profiles/devvm_epyc_host.lua --json` on vm (AMD EPYC, 2 cores), 2026-11-29T19:17:20Z (devvm_epyc_host.lua): a thread waiting in pthread_cond_wait for the idle time, then signalled (pthread_cond_broadcast under the mutex, right after storing the time) by a thread that spins meanwhile; seconds from the signal to the waiter's first clock read after the wait returns (CLOCK_MONOTONIC), median per idle time (calib/wake.h); per point, idle: samples, P10-P90: 0.0001 s: 200, 6.8-8.2 us; 0.001 s: 200, 21.5-38.9 us; 0.01 s: 60, 49.1-102.0 us; 0.1 s: 20, 43.9-125.0 us", kind = "measured"},
}
