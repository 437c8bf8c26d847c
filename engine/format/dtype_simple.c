/* Reference row conversions for the simple 32-element block formats, IQ4_XS
   (IQ4_NL's code book in 256-element super-blocks) and the plain float
   types.  Bit layouts and rounding follow ggml's reference
   quantizers so files written by it round-trip exactly. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "dtype.h"
#include "dtype_rows.h"

/* IQ4_NL's non-linear code book (ggml kvalues_iq4nl). */
const int8_t ember_iq4nl_values[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};

/* E2M1 (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives), doubled. */
const int8_t ember_mxfp4_values[16] = {
    0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12,
};
const int8_t ember_mxfp4_values_u12[16] = {
    12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0,
};

/* ggml casts x + 0.5 to int8 and clamps at the top; clamping on both sides
   first keeps non-finite or out-of-range input from undefined conversions. */
static int trunc_clamp(float v, int hi)
{
    if (!(v > 0.0f)) return 0;
    if (v >= (float)hi) return hi;
    return (int)v;
}

void ember_to_float_q4_0(const void *src, float *y, int64_t nb)
{
    const block_q4_0 *b = src;
    for (int64_t i = 0; i < nb; i++) {
        float d = ember_fp16_to_f32(b[i].d);
        for (int j = 0; j < QK / 2; j++) {
            y[i * QK + j] = (float)((b[i].qs[j] & 0x0f) - 8) * d;
            y[i * QK + j + QK / 2] = (float)((b[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void ember_to_float_q4_1(const void *src, float *y, int64_t nb)
{
    const block_q4_1 *b = src;
    for (int64_t i = 0; i < nb; i++) {
        float d = ember_fp16_to_f32(b[i].d), m = ember_fp16_to_f32(b[i].m);
        for (int j = 0; j < QK / 2; j++) {
            y[i * QK + j] = (float)(b[i].qs[j] & 0x0f) * d + m;
            y[i * QK + j + QK / 2] = (float)(b[i].qs[j] >> 4) * d + m;
        }
    }
}

void ember_to_float_q5_0(const void *src, float *y, int64_t nb)
{
    const block_q5_0 *b = src;
    for (int64_t i = 0; i < nb; i++) {
        float d = ember_fp16_to_f32(b[i].d);
        uint32_t qh = ember_le32(b[i].qh);
        for (int j = 0; j < QK / 2; j++) {
            int h0 = (qh >> j) & 1, h1 = (qh >> (j + 16)) & 1;
            y[i * QK + j] = (float)(((b[i].qs[j] & 0x0f) | h0 << 4) - 16) * d;
            y[i * QK + j + QK / 2] = (float)(((b[i].qs[j] >> 4) | h1 << 4) - 16) * d;
        }
    }
}

void ember_to_float_q5_1(const void *src, float *y, int64_t nb)
{
    const block_q5_1 *b = src;
    for (int64_t i = 0; i < nb; i++) {
        float d = ember_fp16_to_f32(b[i].d), m = ember_fp16_to_f32(b[i].m);
        uint32_t qh = ember_le32(b[i].qh);
        for (int j = 0; j < QK / 2; j++) {
            int h0 = (qh >> j) & 1, h1 = (qh >> (j + 16)) & 1;
            y[i * QK + j] = (float)((b[i].qs[j] & 0x0f) | h0 << 4) * d + m;
            y[i * QK + j + QK / 2] = (float)((b[i].qs[j] >> 4) | h1 << 4) * d + m;
        }
    }
}

void ember_to_float_q8_0(const void *src, float *y, int64_t nb)
{
    const block_q8_0 *b = src;
    for (int64_t i = 0; i < nb; i++) {
        float d = ember_fp16_to_f32(b[i].d);
        for (int j = 0; j < QK; j++) y[i * QK + j] = (float)b[i].qs[j] * d;
    }
}

/* 32 values of a code-book format (IQ4_NL, IQ4_XS's sub-blocks, MXFP4):
   16 bytes of nibbles, element j low, j + 16 high, each d * book[code]. */
static void book_block(const int8_t book[16], float d, const uint8_t *qs, float *y)
{
    for (int j = 0; j < QK / 2; j++) {
        y[j] = d * (float)book[qs[j] & 0x0f];
        y[j + QK / 2] = d * (float)book[qs[j] >> 4];
    }
}

void ember_to_float_iq4_nl(const void *src, float *y, int64_t nb)
{
    const block_iq4_nl *b = src;
    for (int64_t i = 0; i < nb; i++) book_block(ember_iq4nl_values, ember_fp16_to_f32(b[i].d), b[i].qs, y + i * QK);
}

void ember_to_float_iq4_xs(const void *src, float *y, int64_t nb)
{
    const block_iq4_xs *b = src;
    for (int64_t i = 0; i < nb; i++) {
        float d = ember_fp16_to_f32(b[i].d);
        for (int ib = 0; ib < QK_K / QK; ib++, y += QK)
            book_block(ember_iq4nl_values, d * (float)ember_iq4_xs_scale(&b[i], ib), b[i].qs + ib * (QK / 2), y);
    }
}

/* The plain float types are one-element "blocks", so nb counts values. */
void ember_to_float_f32(const void *src, float *y, int64_t nb) { memcpy(y, src, (size_t)nb * sizeof(float)); }

void ember_to_float_f16(const void *src, float *y, int64_t nb)
{
    const uint16_t *h = src;
    for (int64_t i = 0; i < nb; i++) y[i] = ember_fp16_to_f32(h[i]);
}

void ember_to_float_bf16(const void *src, float *y, int64_t nb)
{
    const uint16_t *h = src;
    for (int64_t i = 0; i < nb; i++) y[i] = ember_bf16_to_f32(h[i]);
}

/* Signed value of largest magnitude: the symmetric formats map it to the
   most negative code so the other side never clips. */
static float signed_absmax(const float *x, int n)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; j++) {
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    return max;
}

void ember_from_float_q4_0(const float *x, void *dst, int64_t nb)
{
    block_q4_0 *b = dst;
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float d = signed_absmax(x, QK) / -8.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = ember_f32_to_fp16(d);
        for (int j = 0; j < QK / 2; j++) {
            int q0 = trunc_clamp(x[j] * id + 8.5f, 15);
            int q1 = trunc_clamp(x[j + QK / 2] * id + 8.5f, 15);
            b[i].qs[j] = (uint8_t)(q0 | q1 << 4);
        }
    }
}

void ember_from_float_q4_1(const float *x, void *dst, int64_t nb)
{
    block_q4_1 *b = dst;
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float min = INFINITY, max = -INFINITY;
        for (int j = 0; j < QK; j++) {
            if (x[j] < min) min = x[j];
            if (x[j] > max) max = x[j];
        }
        float d = (max - min) / 15.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = ember_f32_to_fp16(d);
        b[i].m = ember_f32_to_fp16(min);
        for (int j = 0; j < QK / 2; j++) {
            int q0 = trunc_clamp((x[j] - min) * id + 0.5f, 15);
            int q1 = trunc_clamp((x[j + QK / 2] - min) * id + 0.5f, 15);
            b[i].qs[j] = (uint8_t)(q0 | q1 << 4);
        }
    }
}

void ember_from_float_q5_0(const float *x, void *dst, int64_t nb)
{
    block_q5_0 *b = dst;
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float d = signed_absmax(x, QK) / -16.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = ember_f32_to_fp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < QK / 2; j++) {
            int q0 = trunc_clamp(x[j] * id + 16.5f, 31);
            int q1 = trunc_clamp(x[j + QK / 2] * id + 16.5f, 31);
            b[i].qs[j] = (uint8_t)((q0 & 0x0f) | (q1 & 0x0f) << 4);
            qh |= (uint32_t)(q0 >> 4) << j | (uint32_t)(q1 >> 4) << (j + 16);
        }
        ember_put_le32(b[i].qh, qh);
    }
}

void ember_from_float_q5_1(const float *x, void *dst, int64_t nb)
{
    block_q5_1 *b = dst;
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float min = INFINITY, max = -INFINITY;
        for (int j = 0; j < QK; j++) {
            if (x[j] < min) min = x[j];
            if (x[j] > max) max = x[j];
        }
        float d = (max - min) / 31.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = ember_f32_to_fp16(d);
        b[i].m = ember_f32_to_fp16(min);
        uint32_t qh = 0;
        for (int j = 0; j < QK / 2; j++) {
            int q0 = trunc_clamp((x[j] - min) * id + 0.5f, 31);
            int q1 = trunc_clamp((x[j + QK / 2] - min) * id + 0.5f, 31);
            b[i].qs[j] = (uint8_t)((q0 & 0x0f) | (q1 & 0x0f) << 4);
            qh |= (uint32_t)(q0 >> 4) << j | (uint32_t)(q1 >> 4) << (j + 16);
        }
        ember_put_le32(b[i].qh, qh);
    }
}

/* IQ4_NL: the largest magnitude maps to one end of the code book (-127,
   or 113 when that fits the block better: the book is not symmetric) and
   every value to its nearest entry.  (The reference also searches a few
   scales around those; this keeps the simple choice, in the same format.) */
static float iq4_nl_codes(const float *x, float d, uint8_t q[QK])
{
    float id = d != 0.0f ? 1.0f / d : 0.0f, err = 0.0f;
    for (int j = 0; j < QK; j++) {
        float v = x[j] * id, best_e = INFINITY;
        int best = 0;
        for (int c = 0; c < 16; c++) {
            float e = fabsf(v - (float)ember_iq4nl_values[c]);
            if (e < best_e) { best_e = e; best = c; }
        }
        q[j] = (uint8_t)best;
        float r = x[j] - d * (float)ember_iq4nl_values[best];
        err += r * r;
    }
    return err;
}

void ember_from_float_iq4_nl(const float *x, void *dst, int64_t nb)
{
    block_iq4_nl *b = dst;
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float max = signed_absmax(x, QK), d = max / -127.0f, d2 = max / 113.0f;
        uint8_t q[QK], q2[QK];
        if (iq4_nl_codes(x, d2, q2) < iq4_nl_codes(x, d, q)) {
            d = d2;
            memcpy(q, q2, QK);
        }
        b[i].d = ember_f32_to_fp16(d);
        for (int j = 0; j < QK / 2; j++) b[i].qs[j] = (uint8_t)(q[j] | q[j + QK / 2] << 4);
    }
}

void ember_to_float_mxfp4(const void *src, float *y, int64_t nb)
{
    const block_mxfp4 *b = src;
    for (int64_t i = 0; i < nb; i++) book_block(ember_mxfp4_values, ember_mxfp4_scale(b[i].e), b[i].qs, y + i * QK);
}

/* MXFP4: the exponent puts the largest magnitude in the code book's top
   binade (doubled values 8..12, so amax / scale in [8, 16)), each value
   then takes its nearest entry (the first of equals: +0 before -0). */
void ember_from_float_mxfp4(const float *x, void *dst, int64_t nb)
{
    block_mxfp4 *b = dst;
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float amax = 0.0f;
        for (int j = 0; j < QK; j++)
            if (fabsf(x[j]) > amax) amax = fabsf(x[j]);
        int e = amax > 0.0f && isfinite(amax) ? (int)floorf(log2f(amax)) - 2 + 127 : 0;
        if (e < 0) e = 0;
        if (e > 254) e = 254;
        const float d = ember_mxfp4_scale((uint8_t)e);
        uint8_t q[QK];
        for (int j = 0; j < QK; j++) {
            int best = 0;
            float best_e = fabsf((float)ember_mxfp4_values[0] * d - x[j]);
            for (int c = 1; c < 16; c++) {
                float err = fabsf((float)ember_mxfp4_values[c] * d - x[j]);
                if (err < best_e) {
                    best_e = err;
                    best = c;
                }
            }
            q[j] = (uint8_t)best;
        }
        b[i].e = (uint8_t)e;
        for (int j = 0; j < QK / 2; j++) b[i].qs[j] = (uint8_t)(q[j] | q[j + QK / 2] << 4);
    }
}

/* IQ4_XS: each sub-block's scale as IQ4_NL chooses it, then those eight
   on a 6-bit grid whose -32 is the largest in magnitude (as the reference
   sets d), and the codes again against the scale each sub-block got.
   (The reference also searches scales around each; as for IQ4_NL, this
   keeps the simple choice in the same format.) */
void ember_from_float_iq4_xs(const float *x, void *dst, int64_t nb)
{
    block_iq4_xs *b = dst;
    for (int64_t i = 0; i < nb; i++, x += QK_K) {
        float sc[QK_K / QK], max_sc = 0.0f;
        uint8_t q[QK], q2[QK];
        for (int ib = 0; ib < QK_K / QK; ib++) {
            const float *xb = x + ib * QK;
            float max = signed_absmax(xb, QK), d = max / -127.0f, d2 = max / 113.0f;
            sc[ib] = iq4_nl_codes(xb, d2, q2) < iq4_nl_codes(xb, d, q) ? d2 : d;
            if (fabsf(sc[ib]) > fabsf(max_sc)) max_sc = sc[ib];
        }
        float d = max_sc / -32.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = ember_f32_to_fp16(d);
        d = ember_fp16_to_f32(b[i].d);
        b[i].scales_h = 0;
        memset(b[i].scales_l, 0, sizeof b[i].scales_l);
        for (int ib = 0; ib < QK_K / QK; ib++) {
            float l = nearbyintf(id * sc[ib]);
            int ls = !(l > -32.0f) ? 0 : l > 31.0f ? 63 : (int)l + 32;
            b[i].scales_l[ib / 2] |= (uint8_t)((ls & 0x0f) << (4 * (ib % 2)));
            b[i].scales_h |= (uint16_t)((ls >> 4) << (2 * ib));
            iq4_nl_codes(x + ib * QK, d * (float)(ls - 32), q);
            for (int j = 0; j < QK / 2; j++) b[i].qs[ib * (QK / 2) + j] = (uint8_t)(q[j] | q[j + QK / 2] << 4);
        }
    }
}

void ember_from_float_q8_0(const float *x, void *dst, int64_t nb)
{
    block_q8_0 *b = dst;
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float amax = 0.0f;
        for (int j = 0; j < QK; j++)
            if (fabsf(x[j]) > amax) amax = fabsf(x[j]);
        float d = amax / 127.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = ember_f32_to_fp16(d);
        for (int j = 0; j < QK; j++) {
            float v = roundf(x[j] * id);
            /* only NaN/inf input gets here out of range; keep it defined */
            b[i].qs[j] = (int8_t)(v >= 127.0f ? 127 : v <= -127.0f ? -127 : v == v ? (int)v : 0);
        }
    }
}

void ember_from_float_f32(const float *x, void *dst, int64_t nb) { memcpy(dst, x, (size_t)nb * sizeof(float)); }

void ember_from_float_f16(const float *x, void *dst, int64_t nb)
{
    uint16_t *h = dst;
    for (int64_t i = 0; i < nb; i++) h[i] = ember_f32_to_fp16(x[i]);
}

void ember_from_float_bf16(const float *x, void *dst, int64_t nb)
{
    uint16_t *h = dst;
    for (int64_t i = 0; i < nb; i++) h[i] = ember_f32_to_bf16(x[i]);
}
