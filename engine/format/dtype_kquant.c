/* Reference row conversions for the K-quant family (256-element super-blocks):
   Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and the Q8_K activation format.  Bit layouts
   follow ggml exactly so files written by it decode correctly; the quantizers
   search scales the way ggml's reference ones do (weighted least squares over
   a few candidate grids) and reach comparable error, without promising
   byte-identical output. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "dtype.h"
#include "dtype_rows.h"

/* Round half to even, like ggml's nearest_int; the clamp keeps NaN or huge
   input from an undefined conversion (callers clamp to their range anyway). */
static int nearest(float v)
{
    if (!(v > -1e9f)) return v != v ? 0 : -1000000000;
    if (v > 1e9f) return 1000000000;
    return (int)lrintf(v);
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static void pack_scale_min_k4(uint8_t *q, const uint8_t ls[8], const uint8_t lm[8])
{
    memset(q, 0, K_SCALE_SIZE);
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            q[j] = ls[j];
            q[j + 4] = lm[j];
        } else {
            q[j + 4] = (uint8_t)((ls[j] & 0x0f) | ((lm[j] & 0x0f) << 4));
            q[j - 4] |= (uint8_t)((ls[j] >> 4) << 6);
            q[j] |= (uint8_t)((lm[j] >> 4) << 6);
        }
    }
}

/* Q3_K's sixteen 6-bit scales (stored +32): low nibbles in bytes 0..7 (two
   per byte, scales 0..7 low then 8..15 high), high two bits in bytes 8..11. */
static void unpack_q3_scales(const uint8_t *s, int out[16])
{
    for (int j = 0; j < 16; j++) {
        int lo = j < 8 ? s[j] & 0x0f : s[j - 8] >> 4;
        int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
        out[j] = (lo | hi << 4) - 32;
    }
}

/* ---- dequantize ------------------------------------------------------- */

void ember_to_float_q2_K(const void *src, float *y, int64_t nb)
{
    const block_q2_K *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        float d = ember_fp16_to_f32(b->d), dmin = ember_fp16_to_f32(b->dmin);
        const uint8_t *q = b->qs;
        int is = 0;
        for (int n = 0; n < QK_K; n += 128, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; half++) {
                    uint8_t sc = b->scales[is++];
                    float dl = d * (float)(sc & 0x0f), ml = dmin * (float)(sc >> 4);
                    for (int l = 0; l < 16; l++)
                        *y++ = dl * (float)((q[l + 16 * half] >> shift) & 3) - ml;
                }
            }
        }
    }
}

void ember_to_float_q3_K(const void *src, float *y, int64_t nb)
{
    const block_q3_K *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        float d = ember_fp16_to_f32(b->d);
        int sc[16];
        unpack_q3_scales(b->scales, sc);
        const uint8_t *q = b->qs;
        int is = 0, bit = 0;
        for (int n = 0; n < QK_K; n += 128, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, bit++) {
                for (int half = 0; half < 2; half++) {
                    float dl = d * (float)sc[is++];
                    for (int l = 16 * half; l < 16 * half + 16; l++) {
                        int v = (q[l] >> shift) & 3;
                        if (!(b->hmask[l] & (1u << bit))) v -= 4;
                        *y++ = dl * (float)v;
                    }
                }
            }
        }
    }
}

void ember_to_float_q4_K(const void *src, float *y, int64_t nb)
{
    const block_q4_K *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        float d = ember_fp16_to_f32(b->d), dmin = ember_fp16_to_f32(b->dmin);
        const uint8_t *q = b->qs;
        for (int j = 0; j < 8; j += 2, q += 32) {
            int sc, m;
            ember_scale_min_k4(j, b->scales, &sc, &m);
            float d1 = d * (float)sc, m1 = dmin * (float)m;
            ember_scale_min_k4(j + 1, b->scales, &sc, &m);
            float d2 = d * (float)sc, m2 = dmin * (float)m;
            for (int l = 0; l < 32; l++) *y++ = d1 * (float)(q[l] & 0x0f) - m1;
            for (int l = 0; l < 32; l++) *y++ = d2 * (float)(q[l] >> 4) - m2;
        }
    }
}

void ember_to_float_q5_K(const void *src, float *y, int64_t nb)
{
    const block_q5_K *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        float d = ember_fp16_to_f32(b->d), dmin = ember_fp16_to_f32(b->dmin);
        const uint8_t *q = b->qs;
        for (int j = 0; j < 8; j += 2, q += 32) {
            int sc, m;
            ember_scale_min_k4(j, b->scales, &sc, &m);
            float d1 = d * (float)sc, m1 = dmin * (float)m;
            ember_scale_min_k4(j + 1, b->scales, &sc, &m);
            float d2 = d * (float)sc, m2 = dmin * (float)m;
            uint8_t u1 = (uint8_t)(1u << j), u2 = (uint8_t)(2u << j);
            for (int l = 0; l < 32; l++)
                *y++ = d1 * (float)((q[l] & 0x0f) + (b->qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; l++)
                *y++ = d2 * (float)((q[l] >> 4) + (b->qh[l] & u2 ? 16 : 0)) - m2;
        }
    }
}

void ember_to_float_q6_K(const void *src, float *y, int64_t nb)
{
    const block_q6_K *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        float d = ember_fp16_to_f32(b->d);
        const uint8_t *ql = b->ql, *qh = b->qh;
        const int8_t *sc = b->scales;
        for (int n = 0; n < QK_K; n += 128, ql += 64, qh += 32, sc += 8, y += 128) {
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int q1 = ((ql[l] & 0x0f) | ((qh[l] >> 0 & 3) << 4)) - 32;
                int q2 = ((ql[l + 32] & 0x0f) | ((qh[l] >> 2 & 3) << 4)) - 32;
                int q3 = ((ql[l] >> 4) | ((qh[l] >> 4 & 3) << 4)) - 32;
                int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6 & 3) << 4)) - 32;
                y[l] = d * (float)sc[is + 0] * (float)q1;
                y[l + 32] = d * (float)sc[is + 2] * (float)q2;
                y[l + 64] = d * (float)sc[is + 4] * (float)q3;
                y[l + 96] = d * (float)sc[is + 6] * (float)q4;
            }
        }
    }
}

void ember_to_float_q8_K(const void *src, float *y, int64_t nb)
{
    const block_q8_K *b = src;
    for (int64_t i = 0; i < nb; i++, b++)
        for (int l = 0; l < QK_K; l++) *y++ = b->d * (float)b->qs[l];
}

/* ---- scale searches --------------------------------------------------- */

/* Asymmetric fit x ~ scale * L - min with L in [0, nmax], minimising the
   weighted error: start from the min/max grid, then try nstep stretched
   grids and refit scale and min by weighted least squares for each.  Returns
   the scale; *neg_min receives the (non-negative) offset to subtract. */
static float fit_scale_min(int n, int nmax, const float *x, const float *w, uint8_t *L,
                           float *neg_min, uint8_t *Laux, float rmin, float rdelta,
                           int nstep, int use_mad)
{
    float lo = x[0], hi = x[0], sw = w[0], sx = w[0] * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
        sw += w[i];
        sx += w[i] * x[i];
    }
    if (lo > 0) lo = 0;
    if (!(hi > lo)) {   /* constant (or non-finite) sub-block */
        memset(L, 0, (size_t)n);
        *neg_min = (lo == lo && lo > -INFINITY) ? -lo : 0;
        return 0;
    }
    float iscale = (float)nmax / (hi - lo), scale = 1 / iscale, best = 0;
    for (int i = 0; i < n; i++) {
        int l = clampi(nearest(iscale * (x[i] - lo)), 0, nmax);
        L[i] = (uint8_t)l;
        float diff = scale * (float)l + lo - x[i];
        best += w[i] * (use_mad ? fabsf(diff) : diff * diff);
    }
    for (int is = 0; is <= nstep; is++) {
        iscale = (rmin + rdelta * (float)is + (float)nmax) / (hi - lo);
        float sl = 0, sl2 = 0, sxl = 0;
        for (int i = 0; i < n; i++) {
            int l = clampi(nearest(iscale * (x[i] - lo)), 0, nmax);
            Laux[i] = (uint8_t)l;
            sl += w[i] * (float)l;
            sl2 += w[i] * (float)l * (float)l;
            sxl += w[i] * (float)l * x[i];
        }
        float D = sw * sl2 - sl * sl;
        if (!(D > 0)) continue;
        float s = (sw * sxl - sx * sl) / D, m = (sl2 * sx - sl * sxl) / D;
        if (m > 0) {    /* the offset may only shift values down */
            m = 0;
            s = sl2 > 0 ? sxl / sl2 : 0;
        }
        float err = 0;
        for (int i = 0; i < n; i++) {
            float diff = s * (float)Laux[i] + m - x[i];
            err += w[i] * (use_mad ? fabsf(diff) : diff * diff);
        }
        if (err < best) {
            best = err;
            memcpy(L, Laux, (size_t)n);
            scale = s;
            lo = m;
        }
    }
    *neg_min = -lo;
    return scale;
}

/* Symmetric fit x ~ scale * (L - nmax) with L in [0, 2*nmax), weighted by
   x^2 so large values are kept accurate; tries 19 grids around -nmax/max
   (sign chosen so the largest-magnitude value maps to -nmax). */
static float fit_scale_sym(int n, int nmax, const float *x, uint8_t *L)
{
    float amax = 0, max = 0;
    for (int i = 0; i < n; i++) {
        float ax = fabsf(x[i]);
        if (ax > amax) { amax = ax; max = x[i]; }
    }
    if (!(amax > 1e-30f) || !(amax < INFINITY)) {
        memset(L, nmax, (size_t)n);   /* L - nmax == 0 */
        return 0;
    }
    float best_scale = 0, best = -1;
    uint8_t tmp[32];
    for (int is = -9; is <= 9; is++) {
        float iscale = -((float)nmax + 0.1f * (float)is) / max;
        float slx = 0, sl2 = 0;
        for (int i = 0; i < n; i++) {
            int l = clampi(nearest(iscale * x[i]), -nmax, nmax - 1);
            tmp[i] = (uint8_t)(l + nmax);
            float w = x[i] * x[i];
            slx += w * x[i] * (float)l;
            sl2 += w * (float)l * (float)l;
        }
        if (!(sl2 > 0)) continue;
        if (best < 0 || slx * slx > best * sl2) {
            best = slx * slx / sl2;
            best_scale = slx / sl2;
            memcpy(L, tmp, (size_t)n);
        }
    }
    if (best < 0) memset(L, nmax, (size_t)n);
    return best_scale;
}

/* ---- quantize --------------------------------------------------------- */

void ember_from_float_q2_K(const float *x, void *dst, int64_t nb)
{
    block_q2_K *y = dst;
    uint8_t L[QK_K], Laux[16];
    float w[16], mins[16], scales[16];
    for (int64_t i = 0; i < nb; i++, y++, x += QK_K) {
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < 16; j++) {
            for (int l = 0; l < 16; l++) w[l] = fabsf(x[16 * j + l]);
            scales[j] = fit_scale_min(16, 3, x + 16 * j, w, L + 16 * j, &mins[j], Laux,
                                      -0.5f, 0.1f, 15, 1);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        float is = max_scale > 0 ? 15 / max_scale : 0, im = max_min > 0 ? 15 / max_min : 0;
        for (int j = 0; j < 16; j++) {
            int ls = clampi(nearest(is * scales[j]), 0, 15);
            int lm = clampi(nearest(im * mins[j]), 0, 15);
            y->scales[j] = (uint8_t)(ls | lm << 4);
        }
        y->d = ember_f32_to_fp16(max_scale / 15);
        y->dmin = ember_f32_to_fp16(max_min / 15);
        float d = ember_fp16_to_f32(y->d), dmin = ember_fp16_to_f32(y->dmin);
        for (int j = 0; j < 16; j++) {
            float dl = d * (float)(y->scales[j] & 0x0f);
            if (dl == 0) { memset(L + 16 * j, 0, 16); continue; }
            float ml = dmin * (float)(y->scales[j] >> 4);
            for (int l = 0; l < 16; l++)
                L[16 * j + l] = (uint8_t)clampi(nearest((x[16 * j + l] + ml) / dl), 0, 3);
        }
        for (int j = 0; j < QK_K; j += 128)
            for (int l = 0; l < 32; l++)
                y->qs[j / 4 + l] = (uint8_t)(L[j + l] | L[j + l + 32] << 2 |
                                             L[j + l + 64] << 4 | L[j + l + 96] << 6);
    }
}

void ember_from_float_q3_K(const float *x, void *dst, int64_t nb)
{
    block_q3_K *y = dst;
    uint8_t L[QK_K];
    float scales[16];
    for (int64_t i = 0; i < nb; i++, y++, x += QK_K) {
        float max_scale = 0, amax = 0;
        for (int j = 0; j < 16; j++) {
            scales[j] = fit_scale_sym(16, 4, x + 16 * j, L + 16 * j);
            if (fabsf(scales[j]) > amax) { amax = fabsf(scales[j]); max_scale = scales[j]; }
        }
        memset(y->scales, 0, sizeof y->scales);
        if (max_scale != 0) {
            float iscale = -32 / max_scale;
            for (int j = 0; j < 16; j++) {
                int l = clampi(nearest(iscale * scales[j]), -32, 31) + 32;
                if (j < 8) y->scales[j] = (uint8_t)(l & 0x0f);
                else y->scales[j - 8] |= (uint8_t)((l & 0x0f) << 4);
                y->scales[8 + j % 4] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
            }
            y->d = ember_f32_to_fp16(1 / iscale);
        } else {
            for (int j = 0; j < 8; j++) y->scales[j] = 0x00;
            for (int j = 0; j < 16; j++)   /* stored 32 means scale 0 */
                y->scales[8 + j % 4] |= (uint8_t)(2 << (2 * (j / 4)));
            y->d = 0;
        }
        int sc[16];
        unpack_q3_scales(y->scales, sc);
        float d = ember_fp16_to_f32(y->d);
        for (int j = 0; j < 16; j++) {
            float dl = d * (float)sc[j];
            for (int l = 0; l < 16; l++) {
                int v = dl != 0 ? clampi(nearest(x[16 * j + l] / dl), -4, 3) : 0;
                L[16 * j + l] = (uint8_t)(v + 4);
            }
        }
        memset(y->hmask, 0, sizeof y->hmask);
        for (int j = 0; j < QK_K; j++)
            if (L[j] > 3) {
                y->hmask[j % 32] |= (uint8_t)(1u << (j / 32));
                L[j] -= 4;
            }
        for (int j = 0; j < QK_K; j += 128)
            for (int l = 0; l < 32; l++)
                y->qs[j / 4 + l] = (uint8_t)(L[j + l] | L[j + l + 32] << 2 |
                                             L[j + l + 64] << 4 | L[j + l + 96] << 6);
    }
}

/* Q4_K and Q5_K share everything but the grid size and the high bit. */
static void quant_q45_K(const float *x, uint8_t *out, int64_t nb, int five)
{
    int nmax = five ? 31 : 15;
    uint8_t L[QK_K], Laux[32], ls[8], lm[8];
    float w[32], mins[8], scales[8];
    size_t bytes = five ? sizeof(block_q5_K) : sizeof(block_q4_K);
    for (int64_t i = 0; i < nb; i++, x += QK_K, out += bytes) {
        float sum2 = 0;
        for (int l = 0; l < QK_K; l++) sum2 += x[l] * x[l];
        float av = sqrtf(sum2 / QK_K), max_scale = 0, max_min = 0;
        for (int j = 0; j < 8; j++) {
            for (int l = 0; l < 32; l++) w[l] = av + fabsf(x[32 * j + l]);
            scales[j] = fit_scale_min(32, nmax, x + 32 * j, w, L + 32 * j, &mins[j], Laux,
                                      five ? -0.5f : -1.0f, 0.1f, five ? 15 : 20, 0);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        float is = max_scale > 0 ? 63 / max_scale : 0, im = max_min > 0 ? 63 / max_min : 0;
        for (int j = 0; j < 8; j++) {
            ls[j] = (uint8_t)clampi(nearest(is * scales[j]), 0, 63);
            lm[j] = (uint8_t)clampi(nearest(im * mins[j]), 0, 63);
        }
        uint16_t dh = ember_f32_to_fp16(max_scale / 63), mh = ember_f32_to_fp16(max_min / 63);
        uint8_t *sc_bytes = out + 4;   /* d, dmin, then the scales in both layouts */
        memcpy(out, &dh, 2);
        memcpy(out + 2, &mh, 2);
        pack_scale_min_k4(sc_bytes, ls, lm);
        float d = ember_fp16_to_f32(dh), dmin = ember_fp16_to_f32(mh);
        for (int j = 0; j < 8; j++) {
            float dl = d * (float)ls[j];
            if (dl == 0) { memset(L + 32 * j, 0, 32); continue; }
            float ml = dmin * (float)lm[j];
            for (int l = 0; l < 32; l++)
                L[32 * j + l] = (uint8_t)clampi(nearest((x[32 * j + l] + ml) / dl), 0, nmax);
        }
        if (five) {
            block_q5_K *b = (block_q5_K *)(void *)out;
            memset(b->qh, 0, sizeof b->qh);
            uint8_t *ql = b->qs;
            for (int n = 0, m1 = 1, m2 = 2; n < QK_K; n += 64, m1 <<= 2, m2 <<= 2, ql += 32)
                for (int l = 0; l < 32; l++) {
                    int l1 = L[n + l], l2 = L[n + l + 32];
                    if (l1 > 15) { l1 -= 16; b->qh[l] |= (uint8_t)m1; }
                    if (l2 > 15) { l2 -= 16; b->qh[l] |= (uint8_t)m2; }
                    ql[l] = (uint8_t)(l1 | l2 << 4);
                }
        } else {
            block_q4_K *b = (block_q4_K *)(void *)out;
            for (int n = 0; n < QK_K; n += 64)
                for (int l = 0; l < 32; l++)
                    b->qs[n / 2 + l] = (uint8_t)(L[n + l] | L[n + l + 32] << 4);
        }
    }
}

void ember_from_float_q6_K(const float *x, void *dst, int64_t nb)
{
    block_q6_K *y = dst;
    uint8_t L[QK_K];
    float scales[16];
    for (int64_t i = 0; i < nb; i++, y++, x += QK_K) {
        float max_scale = 0, amax = 0;
        for (int j = 0; j < 16; j++) {
            scales[j] = fit_scale_sym(16, 32, x + 16 * j, L + 16 * j);
            if (fabsf(scales[j]) > amax) { amax = fabsf(scales[j]); max_scale = scales[j]; }
        }
        if (max_scale == 0) {
            memset(y, 0, sizeof *y);
            memset(L, 32, sizeof L);
        } else {
            float iscale = -128 / max_scale;
            y->d = ember_f32_to_fp16(1 / iscale);
            for (int j = 0; j < 16; j++)
                y->scales[j] = (int8_t)clampi(nearest(iscale * scales[j]), -128, 127);
            float d = ember_fp16_to_f32(y->d);
            for (int j = 0; j < 16; j++) {
                float dl = d * (float)y->scales[j];
                for (int l = 0; l < 16; l++) {
                    int v = dl != 0 ? clampi(nearest(x[16 * j + l] / dl), -32, 31) : 0;
                    L[16 * j + l] = (uint8_t)(v + 32);
                }
            }
        }
        uint8_t *ql = y->ql, *qh = y->qh;
        for (int j = 0; j < QK_K; j += 128, ql += 64, qh += 32)
            for (int l = 0; l < 32; l++) {
                int a = L[j + l], b = L[j + l + 32], c = L[j + l + 64], e = L[j + l + 96];
                ql[l] = (uint8_t)((a & 0x0f) | (c & 0x0f) << 4);
                ql[l + 32] = (uint8_t)((b & 0x0f) | (e & 0x0f) << 4);
                qh[l] = (uint8_t)((a >> 4) | (b >> 4) << 2 | (c >> 4) << 4 | (e >> 4) << 6);
            }
    }
}

/* d carries the sign of the largest-magnitude value (as ggml) so that value
   maps to exactly -127; the rest round half-to-even into [-127, 127]. */
void ember_from_float_q8_K(const float *x, void *dst, int64_t nb)
{
    block_q8_K *y = dst;
    for (int64_t i = 0; i < nb; i++, y++, x += QK_K) {
        float amax = 0, max = 0;
        for (int l = 0; l < QK_K; l++) {
            float ax = fabsf(x[l]);
            if (ax > amax) { amax = ax; max = x[l]; }
        }
        if (amax == 0 || !(amax < INFINITY)) {
            memset(y, 0, sizeof *y);
            continue;
        }
        float iscale = -127.f / max;
        for (int l = 0; l < QK_K; l++)
            y->qs[l] = (int8_t)clampi(nearest(iscale * x[l]), -127, 127);
        for (int j = 0; j < QK_K / 16; j++) {
            int s = 0;
            for (int l = 0; l < 16; l++) s += y->qs[16 * j + l];
            y->bsums[j] = (int16_t)s;
        }
        y->d = 1 / iscale;
    }
}

void ember_from_float_q4_K(const float *x, void *dst, int64_t nb) { quant_q45_K(x, dst, nb, 0); }
void ember_from_float_q5_K(const float *x, void *dst, int64_t nb) { quant_q45_K(x, dst, nb, 1); }
