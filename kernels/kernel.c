// kernel.c - statuses and the fp16 conversions shared by the reference kernels.
//
// The conversions work on bit patterns only (no compiler half type), so the
// C references read fp16 exactly as CUDA's __half does: to_float is exact,
// from_float rounds to nearest even like __float2half_rn.
#include <string.h>

#include "kernel.h"

const char *ks_kernel_status_str(int status)
{
    switch (status) {
    case KS_KERNEL_OK:
        return "KS_KERNEL_OK";
    case KS_KERNEL_EINVAL:
        return "KS_KERNEL_EINVAL";
    case KS_KERNEL_ENODEV:
        return "KS_KERNEL_ENODEV";
    case KS_KERNEL_ECUDA:
        return "KS_KERNEL_ECUDA";
    }
    return "unknown";
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

float ks_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        // zero or subnormal: mant * 2^-24, exact in fp32
        float v = (float)mant * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    if (exp == 31)
        return from_bits(sign | 0x7f800000u | (mant << 13)); // infinity, or NaN with its payload
    return from_bits(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

// q with the `shift` low bits of m dropped, rounded to nearest even.
static uint32_t round_shift(uint32_t q, uint32_t rem, uint32_t shift)
{
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return q;
}

uint16_t ks_half_from_float(float f)
{
    uint32_t u = to_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u); // NaN
    if (a >= 0x477ff000u)
        return (uint16_t)(sign | 0x7c00u); // >= 65520 rounds to infinity
    uint32_t e = a >> 23;
    if (e < 113) { // below 2^-14: a half subnormal or zero
        uint32_t shift = 126 - e;
        if (e == 0 || shift > 24)
            return sign; // below 2^-25 (or exactly it: ties to even 0)
        uint32_t m = (a & 0x7fffffu) | 0x800000u;
        uint32_t q = round_shift(m >> shift, m & ((1u << shift) - 1), shift);
        return (uint16_t)(sign | q); // q == 0x400 is the smallest normal, correctly encoded
    }
    uint32_t q = ((e - 127 + 15) << 10) | ((a & 0x7fffffu) >> 13);
    q = round_shift(q, a & 0x1fffu, 13); // a carry into the exponent is the right encoding
    return (uint16_t)(sign | q);
}
