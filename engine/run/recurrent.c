/* The recurrent state of the layers that keep one instead of a KV cache
   (recurrent.h): one block of floats, each layer's part at its offset. */
#include "config.h"

#include <string.h>

#include "recurrent.h"

size_t ember_rec_state_bytes(const ember_model *m) { return m->rec_floats * sizeof(float); }

size_t ember_rec_session_bytes(const ember_model *m) { return ember_rec_state_bytes(m) * (1 + EMBER_REC_CKPTS); }

void ember_rec_reset(ember_session *s)
{
    if (!s->rec_state) return;
    memset(s->rec_state, 0, ember_rec_state_bytes(s->m));
    for (int i = 0; i < EMBER_REC_CKPTS; i++) s->rec_ck_pos[i] = -1;
}

void ember_rec_checkpoint(ember_session *s)
{
    if (!s->rec_state || s->n_past == 0) return;   /* position 0 is the reset state */
    int slot = -1;
    for (int i = 0; i < EMBER_REC_CKPTS && slot < 0; i++)
        if (s->rec_ck_pos[i] == s->n_past) slot = i;
    for (int i = 0; i < EMBER_REC_CKPTS && slot < 0; i++)
        if (s->rec_ck_pos[i] < 0) slot = i;
    if (slot < 0) {   /* full: the earliest goes (a rewind rarely goes that far back) */
        slot = 0;
        for (int i = 1; i < EMBER_REC_CKPTS; i++)
            if (s->rec_ck_pos[i] < s->rec_ck_pos[slot]) slot = i;
    }
    memcpy(s->rec_ck[slot], s->rec_state, ember_rec_state_bytes(s->m));
    s->rec_ck_pos[slot] = s->n_past;
}

int ember_rec_rewind(ember_session *s, int n)
{
    int best = -1;
    for (int i = 0; i < EMBER_REC_CKPTS; i++)
        if (s->rec_ck_pos[i] >= 0 && s->rec_ck_pos[i] <= n && (best < 0 || s->rec_ck_pos[i] > s->rec_ck_pos[best])) best = i;
    if (best < 0) {
        ember_rec_reset(s);
        return 0;
    }
    const int pos = s->rec_ck_pos[best];
    memcpy(s->rec_state, s->rec_ck[best], ember_rec_state_bytes(s->m));
    /* copies from past pos belong to the branch being cut off */
    for (int i = 0; i < EMBER_REC_CKPTS; i++)
        if (s->rec_ck_pos[i] > pos) s->rec_ck_pos[i] = -1;
    return pos;
}

void ember_rec_conv_shift(float *cs, const float *rows, int n, int k1, int width)
{
    const size_t row = (size_t)width * sizeof(float);
    for (int j = 0; j < k1; j++) {
        const int src = n - k1 + j;
        if (src >= 0) memcpy(cs + (size_t)j * width, rows + (size_t)src * width, row);
        else memmove(cs + (size_t)j * width, cs + (size_t)(j + n) * width, row);
    }
}
