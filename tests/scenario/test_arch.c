// test_arch.c - a model's architecture in figures (sim/scenario/arch.h):
// the presets of lua/models.lua give the parameter counts their makers
// publish, the KV and index bytes of a token follow from the dimensions, and
// what a decode iteration reads follows the expected-experts formula.
#define _POSIX_C_SOURCE 200809L // mkdtemp

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tmpdir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "scenario.h"
#include "status.h"

static char err[1 << 16];
static char dir[64];

// A scenario of one preset (with HBM large enough for its weights), the
// extra model fields `more` and the parallelism `par` (Lua, may be empty).
static struct ks_scenario *preset_on(const char *name, const char *more, const char *par)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s.lua", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "local ks = require 'kvstrata'\n"
            "return {platform = {profile = 'h200_sxm_pcie5', hbm_bytes = '4TB'},\n"
            "        model = ks.merge(ks.models.%s, {%s}), parallel = {%s},\n"
            "        workload = {prompt_tokens = 1024, output_tokens = 16}}\n",
            name, more, par);
    fclose(f);
    struct ks_scenario *s = NULL;
    if (ks_scenario_load(path, NULL, &s, err, sizeof err) != KS_OK)
        fail_msg("%s refused:\n%s", name, err);
    return s;
}

static struct ks_scenario *preset(const char *name, const char *more)
{
    return preset_on(name, more, "");
}

// Loads the scenario `lua`, written to DIR/NAME.lua: KS_OK and *s, or the
// loader's status with its errors in err.
static int load_text(const char *name, const char *lua, struct ks_scenario **s)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s.lua", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(lua, f);
    fclose(f);
    *s = NULL;
    return ks_scenario_load(path, NULL, s, err, sizeof err);
}

// |got - want| <= tol.
static void near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: %.6g, expected %.6g within %.3g", what, got, want, tol);
}

// Llama 3: every weight counted to the parameter, as its safetensors hold
// them: 8,030,261,248 and 70,553,706,496.
static void llama3(void **state)
{
    (void)state;
    struct ks_scenario *s = preset("llama3_8b", "");
    const struct ks_arch *a = &s->model.arch;
    assert_true(a->params == 8030261248.0);
    assert_true(a->active_params == a->params);
    assert_true(a->weight_bytes == 2 * 8030261248.0);
    assert_int_equal(a->kv_token_bytes, 2 * 8 * 128 * 2); // K and V of 8 heads of 128, bf16: 128 KiB over 32 layers
    assert_int_equal(a->index_token_bytes, 0);
    // a decode step reads every weight but the embedding table (only its batch's rows); one GPU: all of it
    assert_true(a->fixed_read_bytes == 2 * (8030261248.0 - 128256.0 * 4096));
    assert_true(ks_arch_gpu_read_bytes(&s->model, 1) == a->fixed_read_bytes);
    assert_true(ks_arch_gpu_read_bytes(&s->model, 512) == a->fixed_read_bytes);
    ks_scenario_free(s);
    s = preset("llama3_70b", "");
    assert_true(s->model.arch.params == 70553706496.0);
    ks_scenario_free(s);
}

// Published totals, rounded by their makers to the digits given: Qwen3-30B-A3B
// 30.5B (29.9B without embeddings), 3.3B activated; DeepSeek-V3 671B, 37B
// activated (its paper; V3.2 adds the indexer, under 0.2%); GLM-5 744B, 40B
// activated. Tolerances: half a unit of the last published digit, and for
// activated counts 5% (the makers do not say what they count as activated).
static void moe_totals(void **state)
{
    (void)state;
    struct ks_scenario *s = preset("qwen3_30b_a3b", "");
    const struct ks_arch *a = &s->model.arch;
    near(a->params, 30.5e9, 0.05e9, "Qwen3-30B-A3B total");
    near(a->params - 2.0 * 151936 * 2048, 29.9e9, 0.05e9, "Qwen3-30B-A3B non-embedding");
    near(a->active_params, 3.3e9, 0.05 * 3.3e9, "Qwen3-30B-A3B activated");
    assert_int_equal(a->moe_layers, 48);
    ks_scenario_free(s);

    s = preset("deepseek_v3_2", "");
    a = &s->model.arch;
    near(a->params, 671e9, 0.005 * 671e9, "DeepSeek-V3.2 total");
    near(a->active_params, 37e9, 0.05 * 37e9, "DeepSeek-V3.2 activated");
    assert_int_equal(a->moe_layers, 58);
    assert_true(a->weight_bytes == a->params); // FP8: one byte each
    ks_scenario_free(s);

    s = preset("glm_5_1", "");
    a = &s->model.arch;
    near(a->params, 744e9, 0.5e9, "GLM-5 total");
    near(a->active_params, 40e9, 0.05 * 40e9, "GLM-5 activated");
    ks_scenario_free(s);
}

// The README's own digits of these totals ("Models": "Qwen3-30B-A3B 30.53B
// (published 30.5B), DeepSeek-V3.2 671.9B (671B plus the indexer), GLM-5.1
// 743.9B (GLM-5's 744B"), to half a unit of their last digit.
static void readme_totals(void **state)
{
    (void)state;
    struct ks_scenario *s = preset("qwen3_30b_a3b", "");
    near(s->model.arch.params, 30.53e9, 0.005e9, "README Qwen3-30B-A3B 30.53B");
    ks_scenario_free(s);
    s = preset("deepseek_v3_2", "");
    near(s->model.arch.params, 671.9e9, 0.05e9, "README DeepSeek-V3.2 671.9B");
    ks_scenario_free(s);
    s = preset("glm_5_1", "");
    near(s->model.arch.params, 743.9e9, 0.05e9, "README GLM-5.1 743.9B");
    ks_scenario_free(s);
}

// MLA's cache is the latent and its rope part, not K and V: DeepSeek's
// FlashMLA FP8 layout is given (656 B, its index keys 132 B: 83.2% / 16.8%
// of the cache, as ESS reports); GLM-5.1 in BF16 from its dimensions.
static void latent_cache(void **state)
{
    (void)state;
    struct ks_scenario *s = preset("deepseek_v3_2", "");
    assert_int_equal(s->model.arch.kv_token_bytes, 656);
    assert_int_equal(s->model.arch.index_token_bytes, 132);
    near(656.0 / (656 + 132), 0.832, 0.0005, "latent share");
    ks_scenario_free(s);
    // without the packed layout: (512 + 64) values of the KV dtype
    s = preset("glm_5_1", "");
    assert_int_equal(s->model.arch.kv_token_bytes, (512 + 64) * 2);
    assert_int_equal(s->model.arch.index_token_bytes, 128);
    // a prediction, not a fit: PUBLISHED.md's "a 128K-token GLM-5.1 request holds 13.09 GB of BF16 KV"
    double request = 131072.0 * 78 * (double)(s->model.arch.kv_token_bytes + s->model.arch.index_token_bytes);
    near(request, 13.09e9, 0.005e9, "GLM-5.1 128K request");
    ks_scenario_free(s);
}

// Expected distinct experts: experts x (1 - (1 - active / experts)^n).
static void experts_touched(void **state)
{
    (void)state;
    struct ks_scenario *s = preset("deepseek_v3_2", "");
    const struct ks_scenario_model *m = &s->model;
    assert_true(ks_arch_experts_touched(m, 0) == 0);
    near(ks_arch_experts_touched(m, 1), 8, 1e-12, "one token");
    near(ks_arch_experts_touched(m, 2), 2 * 8 - 8.0 * 8 / 256, 1e-12, "two tokens: 2a - a^2/E");
    near(ks_arch_experts_touched(m, 4096), 256, 1e-9, "a batch that touches every expert");
    const struct ks_arch *a = &m->arch;
    near(ks_arch_gpu_read_bytes(m, 1), a->fixed_read_bytes + 58 * 8 * a->expert_bytes, 1e-3, "batch 1");
    near(ks_arch_gpu_read_bytes(m, 1e6), a->fixed_read_bytes + 58 * 256 * a->expert_bytes, 1e-3, "every expert");
    assert_true(a->expert_bytes == 3.0 * 7168 * 2048); // FP8
    ks_scenario_free(s);
}

// One GPU's share: weights over tp (attention over a rank's tp /
// dp_attention GPUs), KV by heads (GQA) or whole (MLA), and the bytes of the
// collectives of one token in one layer (ring: 2 (n - 1) / n of its
// activations, hidden values in bf16).
static void parallel(void **state)
{
    (void)state;
    struct ks_scenario *s = preset_on("llama3_70b", "", "tp = 8");
    const struct ks_arch *a = &s->model.arch;
    assert_int_equal(a->attn_tp, 8);
    assert_true(a->gpu_weight_bytes == 141107412992.0 / 8);
    assert_int_equal(a->gpu_kv_token_bytes, 2 * 1 * 128 * 2); // one of the 8 KV heads
    assert_true(a->comm_attn_bytes == 2.0 * 7 / 8 * 8192 * 2);
    assert_true(a->comm_ffn_bytes == 2.0 * 7 / 8 * 8192 * 2);
    assert_true(ks_arch_comm_bytes(&s->model, 5, 3) == 3 * 2 * 28672.0);
    ks_scenario_free(s);
    // 4 KV heads on 8 GPUs: a head each, replicated
    s = preset_on("qwen3_30b_a3b", "", "tp = 8");
    assert_int_equal(s->model.arch.gpu_kv_token_bytes, 2 * 1 * 128 * 2);
    ks_scenario_free(s);
    // GLM-5.1 as SGLang serves it: 8 attention ranks of one GPU, 8-way experts
    s = preset_on("glm_5_1", "", "tp = 8, dp_attention = 8, ep = 8");
    a = &s->model.arch;
    assert_int_equal(a->attn_tp, 1);
    // per layer: MLA 165,019,648 (Q 6144x2048 + 2048x64x256, latent 6144x576, its expansion 512x64x448,
    // O 64x256x6144), indexer 9,371,648 (2048x32x128 + 6144x128 + 6144x32), norms 12,288: on every GPU
    double attention = 78.0 * (165019648.0 + 9371648.0 + 12288.0);
    near(a->gpu_weight_bytes, attention + (a->params - attention) / 8, 1, "GLM-5.1 weights per GPU");
    assert_int_equal(a->gpu_kv_token_bytes, 1152); // the latent, whole
    assert_true(a->comm_attn_bytes == 0);
    assert_true(a->comm_ffn_bytes == 2.0 * 7 / 8 * 8 * 6144 * 2);         // all-gather + reduce-scatter of 8 ranks
    assert_true(a->comm_moe_bytes == 2.0 * 8 * 7 / 8 * 6144 * 2);         // dispatch + combine to 8 experts
    // a GPU reads its eighth of the experts the replica's tokens use (8 ranks of 4 tokens: 32)
    near(ks_arch_gpu_read_bytes(&s->model, 32),
         a->gpu_fixed_read_bytes + 75 * ks_arch_experts_touched(&s->model, 32) * a->expert_bytes / 8, 1,
         "GLM-5.1 read per GPU");
    ks_scenario_free(s);
}

// An expert group over nodes, as ESS deploys DeepSeek-V3.2's decode: 4 nodes
// of 8 GPUs, each GPU an attention rank, 32-way expert parallelism, the dense
// layers, shared experts, embedding and head replicated (dense_tp = 1).
static void expert_groups(void **state)
{
    (void)state;
    struct ks_scenario *s;
    if (load_text("ep32",
                  "local ks = require 'kvstrata'\n"
                  "return {platform = {profile = 'h200_sxm_pcie5', nodes = 4, rdma = 'gpudirect'},\n"
                  "        model = ks.models.deepseek_v3_2,\n"
                  "        parallel = {tp = 8, dp_attention = 8, ep = 32, dense_tp = 1}}\n",
                  &s) != KS_OK)
        fail_msg("ep32 refused:\n%s", err);
    const struct ks_arch *a = &s->model.arch;
    assert_int_equal(a->moe_gpus, 32);
    assert_int_equal(a->moe_ranks, 32); // 4 replicas of 8 ranks
    assert_int_equal(a->dense_tp, 1);
    assert_int_equal(a->moe_layers, 58);
    double routed = 58.0 * 256 * a->expert_bytes;
    near(a->gpu_weight_bytes, a->weight_bytes - routed + routed / 32, 1, "weights per GPU: all but 31/32 of the experts");
    assert_true(a->gpu_fixed_read_bytes == a->fixed_read_bytes); // every fixed weight on every GPU
    assert_true(a->comm_ffn_bytes == 0);                          // a replicated dense layer: no collective
    assert_true(a->comm_moe_bytes == 2.0 * 8 * 31 / 32 * 7168 * 2); // dispatch + combine to 8 experts, bf16
    // of the 31 other GPUs of the group, 24 are on other nodes
    assert_true(a->moe_remote_share == 24.0 / 31);
    near(ks_arch_comm_remote_bytes(&s->model, 5, 3), 3 * a->comm_moe_bytes * 24 / 31, 1e-6, "remote bytes");
    assert_true(ks_arch_comm_remote_bytes(&s->model, 2, 3) == 0); // layer 2 is dense
    assert_true(ks_arch_comm_bytes(&s->model, 2, 3) == 0);
    // a GPU reads 1/32 of the experts the group's 32 ranks' tokens use (4 each: 128)
    near(ks_arch_gpu_read_bytes(&s->model, 128),
         a->fixed_read_bytes + 58 * ks_arch_experts_touched(&s->model, 128) * a->expert_bytes / 32, 1,
         "read per GPU");
    ks_scenario_free(s);
    // DeepEP's decode kernels dispatch FP8 and combine BF16
    if (load_text("ep32_fp8",
                  "local ks = require 'kvstrata'\n"
                  "return {platform = {profile = 'h200_sxm_pcie5', nodes = 4},\n"
                  "        model = ks.models.deepseek_v3_2,\n"
                  "        parallel = {tp = 8, dp_attention = 8, ep = 32, dispatch_dtype = 'fp8'}}\n",
                  &s) != KS_OK)
        fail_msg("ep32 fp8 refused:\n%s", err);
    assert_true(s->model.arch.comm_moe_bytes == 8.0 * 31 / 32 * (7168 + 7168 * 2));
    assert_int_equal(s->model.arch.dense_tp, 8); // dense weights split over tp by default
    ks_scenario_free(s);
}

// scheduler.mem_fraction: the KV pool is that share of HBM (the H100's
// 81559 MiB) less one GPU's weights (Llama-3-8B in bf16: 16,060,522,496 B;
// on 2 GPUs of TP, half).
static void pool(void **state)
{
    (void)state;
    static const struct {
        const char *par;
        double room;
    } cases[] = {{"", 0.9 * 85520809984.0 - 16060522496.0}, {"tp = 2", 0.9 * 85520809984.0 - 16060522496.0 / 2}};
    for (size_t i = 0; i < 2; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/pool%zu.lua", dir, i);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "local ks = require 'kvstrata'\n"
                   "return {platform = {profile = 'h100_sxm_pcie5', gpus_per_node = 2}, model = ks.models.llama3_8b,\n"
                   "        parallel = {%s}, scheduler = {mem_fraction = 0.9}}\n", cases[i].par);
        fclose(f);
        struct ks_scenario *s = NULL;
        if (ks_scenario_load(path, NULL, &s, err, sizeof err) != KS_OK)
            fail_msg("pool %zu refused:\n%s", i, err);
        near(ks_scenario_kv_room(s), cases[i].room, 1, "the pool");
        assert_true(s->cache.l1.is_share && s->cache.l1.value == 1);
        ks_scenario_free(s);
    }
}

// Rules of the architecture, refused by field.
static void refused_models(void **state)
{
    (void)state;
    static const struct {
        const char *more, *par, *want;
    } cases[] = {
        {"moe = {active = 300}", "", "model.moe.active: 300 routed experts per token, more than the 256 there are"},
        {"moe = {first_dense = 61}", "", "model.moe.first_dense: 61 dense layers leave none of the 61 for experts"},
        {"weight_bytes = '600GB'", "", "model.weight_bytes: an MoE model's weights are counted from its architecture"},
        {"attention = 'mla', qk_nope_dim = 0, qk_rope_dim = 0", "", "MLA needs a query/key head"},
        {"", "tp = 3", "parallel.tp: 3 GPUs per replica do not divide the node's 8"},
        {"", "tp = 8, dp_attention = 3", "parallel.dp_attention: 3 attention ranks do not divide"},
        {"", "tp = 8, ep = 4", "parallel.ep: 4: expert parallelism is 1, the replica's 8 GPUs (parallel.tp), or an "
                               "expert group of whole nodes (a multiple of platform.gpus_per_node, 8) that divides the "
                               "cluster's 8 GPUs"},
        {"", "tp = 8, ep = 16", "parallel.ep: 16: expert parallelism is 1, the replica's 8 GPUs"},
        {"", "tp = 8, dp_attention = 4, dense_tp = 1", "parallel.dense_tp: 1 GPUs must divide the replica's 8 "
                                                       "(parallel.tp) and be a multiple of an attention rank's 2"},
        {"", "tp = 8, dense_tp = 3", "parallel.dense_tp: 3 GPUs must divide the replica's 8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/bad%zu.lua", dir, i);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f,
                "local ks = require 'kvstrata'\n"
                "return {platform = {profile = 'h200_sxm_pcie5', hbm_bytes = '4TB'},\n"
                "        model = ks.merge(ks.models.deepseek_v3_2, {%s}), parallel = {%s}}\n",
                cases[i].more, cases[i].par);
        fclose(f);
        struct ks_scenario *s = NULL;
        assert_int_equal(ks_scenario_load(path, NULL, &s, err, sizeof err), KS_EINVAL);
        if (!strstr(err, cases[i].want))
            fail_msg("case %zu: the errors lack '%s':\n%s", i, cases[i].want, err);
    }
    // experts split 8 ways need experts: Llama has none
    struct ks_scenario *s;
    assert_int_equal(load_text("bad_ep",
                               "local ks = require 'kvstrata'\n"
                               "return {platform = {profile = 'h200_sxm_pcie5'}, model = ks.models.llama3_8b,\n"
                               "        parallel = {tp = 8, ep = 8}}\n",
                               &s),
                     KS_EINVAL);
    assert_non_null(strstr(err, "parallel.ep: 8 ranks need experts they divide (model.moe.experts is 0)"));
}

static int setup(void **state)
{
    (void)state;
    return ks_tmpdir_make(dir, sizeof dir, "ks-arch");
}

static int teardown(void **state)
{
    (void)state;
    return ks_tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(llama3),          cmocka_unit_test(moe_totals),     cmocka_unit_test(latent_cache),
        cmocka_unit_test(experts_touched), cmocka_unit_test(parallel),   cmocka_unit_test(pool),
        cmocka_unit_test(refused_models),  cmocka_unit_test(readme_totals),  cmocka_unit_test(expert_groups),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
