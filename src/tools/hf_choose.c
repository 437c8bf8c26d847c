/* References USER/REPO[:QUANT] and the choice of one GGUF in a repository. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hf.h"

/* The Hub's names: letters, digits, '-', '_', '.', no ".." and no leading
   or trailing '.', so that one never names a directory above the cache. */
static bool name_ok(const char *s, size_t n)
{
    if (!n || n > 96 || s[0] == '.' || s[0] == '-' || s[n - 1] == '.') return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c) && c != '-' && c != '_' && c != '.') return false;
        if (c == '.' && i + 1 < n && s[i + 1] == '.') return false;
        if (c == '-' && i + 1 < n && s[i + 1] == '-') return false;   /* "--" separates in the cache */
    }
    return true;
}

int hf_ref_parse(const char *s, hf_ref *r, ember_err *err)
{
    memset(r, 0, sizeof *r);
    if (!strncmp(s, "hf:", 3)) s += 3;
    const char *slash = strchr(s, '/'), *colon = strchr(s, ':');
    size_t end = colon ? (size_t)(colon - s) : strlen(s);
    if (!slash || (size_t)(slash - s) >= end || !name_ok(s, (size_t)(slash - s)) ||
        !name_ok(slash + 1, end - (size_t)(slash - s) - 1))
        return ember_seterr(err, "'%s' is not a Hugging Face model: give USER/REPO or USER/REPO:QUANT "
                                 "(e.g. bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M)", s);
    snprintf(r->repo, sizeof r->repo, "%.*s", (int)end, s);
    if (colon) {
        const char *q = colon + 1;
        bool ok = *q && strlen(q) < sizeof r->quant;
        /* '/': a file in a folder, as `ember models` names it (only ever
           compared with the listing's paths, never a path itself) */
        for (const char *p = q; ok && *p; p++)
            if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.' && *p != '/') ok = false;
        if (!ok) return ember_seterr(err, "'%s': the quantization after ':' is a name such as Q4_K_M", s);
        snprintf(r->quant, sizeof r->quant, "%s", q);
    }
    return 0;
}

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static bool is_gguf(const char *p)
{
    size_t n = strlen(p);
    return n > 5 && !strcasecmp(p + n - 5, ".gguf");
}

/* "...-00001-of-00003.gguf": one part of a file split by gguf-split */
static bool is_split(const char *p)
{
    const char *b = base(p);
    for (const char *s = b; (s = strstr(s, "-of-")); s++) {
        if (s - b < 6) continue;
        bool digits = s[-6] == '-';
        for (int i = 1; i <= 5; i++) digits = digits && isdigit((unsigned char)s[-i]) && isdigit((unsigned char)s[3 + i]);
        if (digits && !strcasecmp(s + 9, ".gguf")) return true;
    }
    return false;
}

static bool is_mmproj(const char *p) { return strcasestr(base(p), "mmproj") != NULL; }

static bool word(char c, bool after) { return isalnum((unsigned char)c) || (after && c == '_'); }

/* 2: q stands as a whole word in s ("Q4_K" in "x-Q4_K.gguf", not in
   "x-Q4_K_M.gguf"); 1: q is a part of it; 0: absent.  Case-insensitive. */
static int match_in(const char *s0, const char *q)
{
    size_t ql = strlen(q);
    int best = 0;
    for (const char *s = s0; *s; s++) {
        if (strncasecmp(s, q, ql)) continue;
        bool whole = (s == s0 || !word(s[-1], false)) && !word(s[ql], true);
        best = whole ? 2 : (best ? best : 1);
        if (whole) break;
    }
    return best;
}

/* The file's name is what QUANT names; its folders only when no name
   matches (Q4_K_M/model.gguf) or when QUANT has a '/' itself (a path as
   `ember models` lists it). */
static int match(const char *p, const char *q, bool in_path)
{
    return match_in(in_path ? p : base(p), q);
}

static void list_names(char *buf, size_t cap, char *const *names, const int *idx, int n)
{
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < n && off + 1 < cap; i++) {
        int w = snprintf(buf + off, cap - off, "%s%s", i ? ", " : "", names[idx[i]]);
        if (w < 0) break;
        off += (size_t)w;
    }
    if (off >= cap && cap > 4) strcpy(buf + cap - 4, "...");
}

/* The unique file for q among the candidates: whole-word matches first,
   then partial ones, in the names, then in the paths.  Index,
   HF_CHOOSE_NONE or HF_CHOOSE_AMBIGUOUS (the matches in out/nout). */
static int pick(char *const *names, const int *cand, int nc, const char *q, int *out, int *nout)
{
    for (int in_path = strchr(q, '/') != NULL; in_path < 2; in_path++)
        for (int level = 2; level >= 1; level--) {
            *nout = 0;
            for (int i = 0; i < nc; i++)
                if (match(names[cand[i]], q, in_path) >= level) out[(*nout)++] = cand[i];
            if (*nout == 1) return out[0];
            if (*nout > 1) return HF_CHOOSE_AMBIGUOUS;
        }
    return HF_CHOOSE_NONE;
}

/* cand and hits: room for n indices each */
static int choose(const char *repo, char *const *names, int n, const char *quant, int *cand, int *hits,
                  ember_err *err)
{
    int nc = 0, nh = 0, split = 0, proj = 0, ngguf = 0;
    for (int i = 0; i < n; i++) {
        if (!is_gguf(names[i])) continue;
        ngguf++;
        if (is_split(names[i])) split++;
        else if (is_mmproj(names[i])) proj++;
        else cand[nc++] = i;
    }
    char list[400];
    if (!ngguf) {
        ember_seterr(err, "%s has no GGUF file", repo);
        return HF_CHOOSE_NONE;
    }
    if (quant && *quant) {
        int r = pick(names, cand, nc, quant, hits, &nh);
        if (r >= 0) return r;
        if (r == HF_CHOOSE_AMBIGUOUS) {
            list_names(list, sizeof list, names, hits, nh);
            ember_seterr(err, "%s: '%s' matches %d files: %s; name one more exactly (USER/REPO:NAME)", repo,
                         quant, nh, list);
            return r;
        }
        for (int i = 0; i < n; i++)
            if (is_gguf(names[i]) && is_split(names[i]) && match(names[i], quant, true)) {
                ember_seterr(err, "%s: '%s' is only there split into parts (%s), which ember cannot open: "
                                  "join them with llama-gguf-split --merge", repo, quant, names[i]);
                return HF_CHOOSE_NONE;
            }
        list_names(list, sizeof list, names, cand, nc);
        ember_seterr(err, "%s has no GGUF file matching '%s'%s%s", repo, quant, nc ? "; it has: " : "", list);
        return HF_CHOOSE_NONE;
    }
    static const char *const dflt[] = {"Q4_K_M", "Q8_0"};
    for (size_t k = 0; k < sizeof dflt / sizeof dflt[0]; k++) {
        int r = pick(names, cand, nc, dflt[k], hits, &nh);
        if (r >= 0) return r;
        /* several Q4_K_M (m-Q4_K_M, m-UD-Q4_K_M): a person chooses, not
           the next default behind their backs */
        if (r == HF_CHOOSE_AMBIGUOUS) {
            list_names(list, sizeof list, names, hits, nh);
            ember_seterr(err, "%s has %d %s GGUF files: %s; choose one with %s:NAME", repo, nh, dflt[k], list,
                         repo);
            return r;
        }
    }
    if (nc == 1) return cand[0];
    if (!nc) {
        if (split)
            ember_seterr(err, "%s has only split GGUF files (%d parts), which ember cannot open: join them with "
                              "llama-gguf-split --merge", repo, split);
        else
            ember_seterr(err, "%s has only projector (mmproj) GGUF files (%d), no model", repo, proj);
        return HF_CHOOSE_NONE;
    }
    list_names(list, sizeof list, names, cand, nc);
    ember_seterr(err, "%s has %d GGUF files and none is Q4_K_M or Q8_0: choose one with %s:QUANT (%s)", repo, nc,
                 repo, list);
    return HF_CHOOSE_AMBIGUOUS;
}

int hf_choose(const char *repo, char *const *names, int n, const char *quant, ember_err *err)
{
    /* on the heap: a listing can hold a million names */
    int *idx = malloc(2 * ((size_t)(n > 0 ? n : 0) + 1) * sizeof *idx);
    if (!idx) {
        ember_seterr(err, "out of memory");
        return HF_CHOOSE_NONE;
    }
    int r = choose(repo, names, n, quant, idx, idx + n + 1, err);
    free(idx);
    return r;
}
