/* Comparing two logits rows: the argmax and the cosine (in double). */
#ifndef EMBER_TESTS_LOGITS_CMP_H
#define EMBER_TESTS_LOGITS_CMP_H

#include <math.h>

static inline int logits_argmax(const float *v, int n)
{
    int b = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[b]) b = i;
    return b;
}

static inline double logits_cos(const float *x, const float *y, int n)
{
    double xy = 0, xx = 0, yy = 0;
    for (int i = 0; i < n; i++) {
        xy += (double)x[i] * y[i];
        xx += (double)x[i] * x[i];
        yy += (double)y[i] * y[i];
    }
    return xy / (sqrt(xx * yy) + 1e-30);
}

#endif
