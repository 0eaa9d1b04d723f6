-- models.lua - model presets for scenarios: `model = ks.models.llama3_8b`
-- (kvstrata.lua makes them ks.models), or ks.merge(ks.models.deepseek_v3_2,
-- {max_context = 32768}) to change a field.
--
-- Each field is a figure {value, source, kind} that names the public config
-- it comes from, as the platform profiles cite datasheets; `kvstrata
-- scenario check --explain` shows where each value came from. The fields
-- and what kvstrata derives from them (parameters, weight bytes, KV and
-- index bytes per token): README "Scenarios", model; sim/scenario/arch.h.
--
-- Parameter counts these presets give (`kvstrata scenario check` prints
-- them), against the published ones, are checked by tests/scenario/test_arch.c.
local M = {}

-- Every field of t as a figure from `source` (nested tables too), except
-- the fields of `own`, which carry their own figures.
local function cited(source, t, own)
  local out = {}
  for k, v in pairs(t) do
    if type(v) == "table" then
      out[k] = cited(source, v, own and own[k])
    else
      out[k] = {value = v, source = source, kind = "datasheet"}
    end
  end
  for k, v in pairs(own or {}) do
    if type(v) == "table" and v.value == nil then
      out[k] = out[k] or {}
    else
      out[k] = v
    end
  end
  return out
end

local LLAMA31_8B = "meta-llama/Llama-3.1-8B config.json (Hugging Face); the same architecture as " ..
                   "Meta-Llama-3-8B, whose context is 8192"
M.llama3_8b = cited(LLAMA31_8B, {
  attention = "gqa", layers = 32, hidden = 4096, intermediate = 14336, vocab = 128256,
  embeddings = "untied", q_heads = 32, kv_heads = 8, head_dim = 128,
  weight_dtype = "bf16", dtype = "bf16", max_context = 131072,
})

local LLAMA31_70B = "meta-llama/Llama-3.1-70B config.json (Hugging Face); the same architecture as " ..
                    "Meta-Llama-3-70B, whose context is 8192"
M.llama3_70b = cited(LLAMA31_70B, {
  attention = "gqa", layers = 80, hidden = 8192, intermediate = 28672, vocab = 128256,
  embeddings = "untied", q_heads = 64, kv_heads = 8, head_dim = 128,
  weight_dtype = "bf16", dtype = "bf16", max_context = 131072,
})

-- Every layer is MoE (decoder_sparse_step 1, no shared expert); `intermediate`
-- (6144) is the config's dense size, unused by its layers.
local QWEN3_30B = "Qwen/Qwen3-30B-A3B config.json (Hugging Face)"
M.qwen3_30b_a3b = cited(QWEN3_30B, {
  attention = "gqa", layers = 48, hidden = 2048, intermediate = 6144, vocab = 151936,
  embeddings = "untied", q_heads = 32, kv_heads = 4, head_dim = 128,
  moe = {experts = 128, active = 8, shared = 0, intermediate = 768, first_dense = 0},
  weight_dtype = "bf16", dtype = "bf16", max_context = 40960,
})

-- FP8 weights and the FP8 latent cache of FlashMLA: per token and layer 512
-- FP8 latent values, 4 FP32 scales and the 64 rope values in BF16 (656 B,
-- not 576); index keys 128 FP8 values and one FP32 scale (132 B).
local DSV32 = "deepseek-ai/DeepSeek-V3.2-Exp config.json and inference/model.py (Hugging Face, GitHub)"
local ESS = "Chen et al., ESS, arXiv 2512.10576: DeepSeek-V3.2-Exp's latent cache is 656 B per token and layer " ..
            "(FlashMLA's FP8 layout)"
local ESS_INDEX = "ESS, arXiv 2512.10576 (secondary, PUBLISHED.md section 4): the indexer cache is about 132 B " ..
                  "per token and layer (128 FP8 values and a scale)"
M.deepseek_v3_2 = cited(DSV32, {
  attention = "mla", layers = 61, hidden = 7168, intermediate = 18432, vocab = 129280,
  embeddings = "untied", q_heads = 128, q_lora_rank = 1536, kv_lora_rank = 512,
  qk_nope_dim = 128, qk_rope_dim = 64, v_head_dim = 128,
  indexer = {heads = 64, dim = 128, dtype = "fp8"},
  moe = {experts = 256, active = 8, shared = 1, intermediate = 2048, first_dense = 3},
  weight_dtype = "fp8", dtype = "fp8", max_context = 163840,
}, {
  kv_token_bytes = {value = 656, source = ESS, kind = "datasheet"},
  indexer = {token_bytes = {value = 132, source = ESS_INDEX, kind = "datasheet"}},
})

-- GLM-5.1 declares model_type glm_moe_dsa, GLM-5's architecture: layers,
-- hidden, heads, ranks, experts, vocabulary and context as quoted from
-- zai-org/GLM-5.1-FP8's config.json; the other sizes are the defaults of
-- transformers' GlmMoeDsaConfig, documented as GLM-5's. FP8 weights (the
-- FP8 checkpoint); the KV cache in BF16, as SGLang's baseline holds it.
local GLM51 = "zai-org/GLM-5.1-FP8 config.json as quoted in public code (78 layers, 3 dense; hidden 6144; " ..
              "64 heads; q_lora_rank 2048, kv_lora_rank 512; 256 routed experts, top 8, 1 shared; vocab " ..
              "154880; context 202752); the rest from transformers' GlmMoeDsaConfig (GLM-5) defaults"
M.glm_5_1 = cited(GLM51, {
  attention = "mla", layers = 78, hidden = 6144, intermediate = 12288, vocab = 154880,
  embeddings = "untied", q_heads = 64, q_lora_rank = 2048, kv_lora_rank = 512,
  qk_nope_dim = 192, qk_rope_dim = 64, v_head_dim = 256,
  indexer = {heads = 32, dim = 128, dtype = "fp8"},
  moe = {experts = 256, active = 8, shared = 1, intermediate = 2048, first_dense = 3},
  weight_dtype = "fp8", dtype = "bf16", max_context = 202752,
})

return M
