/* Slash-command parsing and completion. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slash.h"

const char *const ui_slash_names[] = {"/help", "/clear", "/system", "/set", "/profile",
                                      "/stats", "/regen", "/save", "/quit", "/raw", "/copy", NULL};
static const ui_slash_kind kinds[] = {SL_HELP, SL_CLEAR, SL_SYSTEM, SL_SET, SL_PROFILE,
                                      SL_STATS, SL_REGEN, SL_SAVE, SL_QUIT, SL_RAW, SL_COPY};

const char *const ui_slash_help[] = {
    "/help               this list (keys: F1)",
    "/clear              forget the conversation (the system prompt stays)",
    "/system TEXT        set the system prompt (empty: remove it) and restart",
    "/set KEY VALUE      sampling: temp, top_p, top_k, min_p, seed, n_predict",
    "/profile [NAME]     switch profile (no name: list them; F2 / Ctrl-P cycle)",
    "/stats              last turn's numbers and the execution plan summary",
    "/regen              answer the last message again",
    "/save FILE          write the transcript as Markdown",
    "/quit               leave (also Ctrl-D)",
    "/raw                replies as raw text / as Markdown (also F4)",
    "/copy [N|all]       copy the last reply, its N-th code block, or the whole chat (OSC 52)",
    NULL};

static const char *const set_keys[] = {"temp", "top_p", "top_k", "min_p", "seed", "n_predict", NULL};

static int error(ui_slash *o, const char *msg, const char *a, size_t n)
{
    o->kind = SL_ERROR;
    snprintf(o->err, sizeof o->err, msg, (int)n, a);
    return 0;
}

static void parse_set(const char *a, size_t n, ui_slash *o)
{
    size_t k = 0;
    while (k < n && !isspace((unsigned char)a[k])) k++;
    const char *v = a + k;
    size_t vn = n - k;
    while (vn && isspace((unsigned char)*v)) v++, vn--;
    int key = -1;
    for (int i = 0; set_keys[i]; i++)
        if (strlen(set_keys[i]) == k && !strncmp(a, set_keys[i], k)) key = i;
    if (key < 0 || k == 0) {
        error(o, "/set: unknown key '%.*s' (temp, top_p, top_k, min_p, seed, n_predict)", a, k);
        return;
    }
    if (vn == 0 || vn > 40) {
        error(o, "/set %.*s: give a value, e.g. /set temp 0.7", a, k);
        return;
    }
    char buf[48];
    memcpy(buf, v, vn);
    buf[vn] = 0;
    char *end;
    errno = 0;
    o->key = (ui_set_key)key;
    o->kind = SL_SET;
    switch (o->key) {
    case SET_TEMP: case SET_TOP_P: case SET_MIN_P: {
        double d = strtod(buf, &end);
        if (*end || errno || !isfinite(d)) { error(o, "/set: '%.*s' is not a number", v, vn); return; }
        if (o->key == SET_TEMP && (d < 0 || d > 100)) { error(o, "/set temp: %.*s is outside 0..100", v, vn); return; }
        if (o->key == SET_TOP_P && (d <= 0 || d > 1)) { error(o, "/set top_p: %.*s is outside (0, 1]", v, vn); return; }
        if (o->key == SET_MIN_P && (d < 0 || d > 1)) { error(o, "/set min_p: %.*s is outside 0..1", v, vn); return; }
        o->fval = d;
        break;
    }
    case SET_TOP_K: case SET_N_PREDICT: {
        long long x = strtoll(buf, &end, 10);
        if (*end || errno) { error(o, "/set: '%.*s' is not a whole number", v, vn); return; }
        if (o->key == SET_TOP_K && (x < 0 || x > 1000000)) { error(o, "/set top_k: %.*s is outside 0..1000000 (0 = off)", v, vn); return; }
        if (o->key == SET_N_PREDICT && (x < -1 || x == 0 || x > 1000000)) { error(o, "/set n_predict: %.*s must be -1 (no limit) or 1..1000000", v, vn); return; }
        o->ival = x;
        break;
    }
    case SET_SEED: {
        if (buf[0] == '-') { error(o, "/set seed: %.*s must not be negative", v, vn); return; }
        unsigned long long x = strtoull(buf, &end, 10);
        if (*end || errno) { error(o, "/set seed: '%.*s' is not a whole number", v, vn); return; }
        o->uval = x;
        break;
    }
    }
}

void ui_slash_parse(const char *line, ui_slash *o)
{
    memset(o, 0, sizeof *o);
    const char *p = line;
    if (p[0] != '/' || p[1] == '/') {
        o->kind = SL_NONE;
        o->arg = p[0] == '/' ? p + 1 : p;
        o->arg_len = strlen(o->arg);
        return;
    }
    size_t k = 1;
    while (p[k] && !isspace((unsigned char)p[k])) k++;
    const char *a = p + k;
    while (*a && isspace((unsigned char)*a)) a++;
    size_t n = strlen(a);
    while (n && isspace((unsigned char)a[n - 1])) n--;
    o->arg = a;
    o->arg_len = n;
    for (int i = 0; ui_slash_names[i]; i++) {
        if (strlen(ui_slash_names[i]) != k || strncmp(p, ui_slash_names[i], k)) continue;
        o->kind = kinds[i];
        switch (o->kind) {
        case SL_SET: parse_set(a, n, o); break;
        case SL_SAVE:
            if (!n) error(o, "/save needs a file name, e.g. /save chat.md%.*s", "", 0);
            break;
        case SL_COPY: {
            char *end;
            long v = n ? strtol(a, &end, 10) : 0;
            if (n == 3 && !strncmp(a, "all", 3)) o->ival = -1;
            else if (n && (end != a + n || v < 1 || v > 1000000))
                error(o, "/copy takes nothing, a code block number (1, 2, ...) or 'all', not '%.*s'", a, n);
            else o->ival = v;
            break;
        }
        case SL_HELP: case SL_CLEAR: case SL_STATS: case SL_REGEN: case SL_QUIT: case SL_RAW:
            if (n) error(o, "this command takes no argument (got '%.*s')", a, n);
            break;
        default: break;
        }
        return;
    }
    error(o, "unknown command '%.*s' (try /help; start with // to send a line beginning with /)", p, k);
}

/* Adds the candidates among words[] that start with pre; returns count. */
static int gather(const char *pre, size_t pn, const char *const *words, int nw, const char **c, int cap)
{
    int n = 0;
    for (int i = 0; (nw < 0 ? words[i] != NULL : i < nw); i++)
        if (!strncmp(words[i], pre, pn) && n < cap) c[n++] = words[i];
    return n;
}

int ui_slash_complete(const char *line, const char *const *profiles, int n_profiles,
                      char *out, size_t cap, char *list, size_t list_cap)
{
    const char *cand[64];
    int n = 0;
    size_t head;                       /* bytes of line kept before the word */
    const char *word;
    snprintf(out, cap, "%s", line);
    if (list_cap) list[0] = 0;
    if (line[0] != '/') return 0;
    const char *sp = strchr(line, ' ');
    if (!sp) {
        head = 0;
        word = line;
        n = gather(word, strlen(word), ui_slash_names, -1, cand, 64);
    } else {
        const char *a = sp;
        while (*a == ' ') a++;
        if (strchr(a, ' ')) return 0;  /* only the first argument completes */
        head = (size_t)(a - line);
        word = a;
        size_t cmd = (size_t)(sp - line);
        if (cmd == 4 && !strncmp(line, "/set", 4))
            n = gather(word, strlen(word), set_keys, -1, cand, 64);
        else if (cmd == 8 && !strncmp(line, "/profile", 8) && profiles)
            n = gather(word, strlen(word), profiles, n_profiles, cand, 64);
        else
            return 0;
    }
    if (n == 0) return 0;
    size_t common = strlen(cand[0]);
    for (int i = 1; i < n; i++) {
        size_t j = 0;
        while (j < common && cand[i][j] == cand[0][j]) j++;
        common = j;
    }
    snprintf(out, cap, "%.*s%.*s%s", (int)head, line, (int)common, cand[0], n == 1 ? " " : "");
    size_t used = 0;
    for (int i = 0; i < n && list_cap; i++) {
        int k = snprintf(list + used, list_cap - used, "%s%s", i ? " " : "", cand[i]);
        if (k < 0 || (size_t)k >= list_cap - used) break;
        used += (size_t)k;
    }
    return n;
}
