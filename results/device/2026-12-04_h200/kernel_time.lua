-- written by kvstrata bench kernels on vm, 2026-12-04T16:55:24Z
return {
  kernel_time = {
    source = "kvstrata bench kernels --backend cuda --json --profile /root/out/kernel_time.lua on vm (NVIDIA H200), 2026-12-04T16:55:24Z",
    kind = "measured",
    backend = "cuda",
    batch = 32, kv_heads = 8, q_heads = 32, head_dim = 128, block_size = 32, dtype = "fp16",
    blocks = {8, 16, 32, 64, 128, 256}, -- selected blocks per sequence
    seconds = {5.55936e-05, 6.66464e-05, 0.000110327, 0.000188829, 0.000345761, 0.0006798}, -- one decode layer for the whole batch
  },
}
