/* The words a profile may use (from the engine's own tables where it has
   them), error class names, and "did you mean" suggestions. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "profile_yaml.h"

static const char *const errc_names[] = {
    "ok", "io", "too-large", "empty", "syntax", "tab", "multi-doc", "alias",
    "not-mapping", "unknown-key", "duplicate-key", "type", "value", "enum", "missing",
    "unsupported", "pack-not-packed", "too-deep", "no-match", "not-found", "model",
};
_Static_assert(sizeof errc_names / sizeof errc_names[0] == PROFILE_E_COUNT,
               "one name per profile_errc");

const char *profile_errc_name(profile_errc c)
{
    return (unsigned)c < PROFILE_E_COUNT ? errc_names[c] : "?";
}

/* ---- the single tables of words ------------------------------------------- */

/* The strategies and projection names are the engine's own tables
   (ember_strategy_name / ember_proj_name, engine/model.c): a profile can
   name exactly what the engine has, and nothing else. */

int profile_strategy_names(const char **names)
{
    int n = 0;
    while (n < MAX_STRATEGIES) {
        const char *s = ember_strategy_name((ember_strategy)n);
        if (!s || !strcmp(s, "?")) break;
        names[n++] = s;
    }
    return n;
}

const char *const profile_when_names[3] = {"load", "before-prefill", "after-prefill"};
const char *const profile_prefill_names[2] = {"generic", "packed"};

const char *profile_strategy_name(ember_strategy s)
{
    const char *names[MAX_STRATEGIES];
    int n = profile_strategy_names(names);
    return (unsigned)s < (unsigned)n ? names[s] : NULL;
}

const char *profile_when_name(ember_pack_when w)
{
    return (unsigned)w < 3 ? profile_when_names[w] : "?";
}

const char *profile_proj_name(int bit_index)
{
    return ember_proj_name(bit_index);
}

void profile_proj_list(unsigned mask, char *buf, size_t cap)
{
    if (!cap) return;
    buf[0] = 0;
    if ((mask & EMBER_PROJ_ALL) == EMBER_PROJ_ALL) {
        snprintf(buf, cap, "all%s", mask & EMBER_PROJ_OUTPUT ? ", output" : "");
        return;
    }
    if (!mask) {
        snprintf(buf, cap, "none");
        return;
    }
    size_t used = 0;
    for (int i = 0; i < EMBER_PROJ_NAMES; i++) {
        if (!(mask & (1u << i))) continue;
        int w = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", ember_proj_name(i));
        if (w < 0 || (size_t)w >= cap - used) break;
        used += (size_t)w;
    }
}

/* ---- "did you mean" ------------------------------------------------------- */

static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    int row[64];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = diag + cost;
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The closest word within a typo's reach, or NULL. */
static const char *suggest(const char *word, const char *const *words, int n)
{
    const char *best = NULL;
    int bestd = 99;
    for (int i = 0; i < n; i++) {
        if (!words[i]) continue;
        int d = edit_distance(word, words[i]);
        int reach = (int)strlen(words[i]) / 3;
        if (reach < 2) reach = 2;
        if (d <= reach && d < bestd) {
            best = words[i];
            bestd = d;
        }
    }
    return best;
}

/* " (did you mean 'x'?)" or "" */
const char *profile_dym(char *buf, size_t cap, const char *word, const char *const *words, int n)
{
    const char *s = suggest(word, words, n);
    if (s) snprintf(buf, cap, " (did you mean '%s'?)", s);
    else buf[0] = 0;
    return buf;
}

void profile_join_words(char *buf, size_t cap, const char *const *words, int n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", words[i]);
        if (w < 0 || (size_t)w >= cap - used) break;
        used += (size_t)w;
    }
}

