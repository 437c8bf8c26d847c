/* The Jinja interpreter: language features one by one with the strings
 * jinja2 3.1 gives (checked against it, in Hugging Face's configuration),
 * error cases and limits, a corpus of real chat templates with their
 * expected renderings (../shared/fixtures/templates), and mutated corpus
 * templates that must end in text or an error, never a crash. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jinja.h"
#include "jinja_impl.h"
#include "tap.h"

static struct tm fixed_now(void)
{
    struct tm tm = {0};
    tm.tm_year = 2026 - 1900;
    tm.tm_mon = 11;
    tm.tm_mday = 2;
    tm.tm_hour = 12;
    time_t t = timegm(&tm);
    gmtime_r(&t, &tm);
    return tm;
}

/* Renders tmpl with the variables of a JSON object (NULL: none). */
static char *render_lim(const char *tmpl, const char *vars_json, const jinja_limits *lim, jinja_error *err)
{
    jinja_template *t = jinja_parse(tmpl, strlen(tmpl), err);
    if (!t) return NULL;
    jinja_vars *v = jinja_vars_new();
    char *out = NULL;
    if (vars_json && jinja_vars_update_json(v, vars_json, strlen(vars_json), err)) goto done;
    struct tm now = fixed_now();
    jinja_render_opts o = {&now, {0}};
    if (lim) o.limits = *lim;
    size_t len;
    out = jinja_render(t, v, &o, &len, err);
done:
    jinja_vars_free(v);
    jinja_template_free(t);
    return out;
}

static char *render(const char *tmpl, const char *vars_json, jinja_error *err)
{
    return render_lim(tmpl, vars_json, NULL, err);
}

static void expect_v(const char *tmpl, const char *vars, const char *want)
{
    jinja_error err;
    char *got = render(tmpl, vars, &err);
    if (!tap_ok(got && !strcmp(got, want), "%s", tmpl)) {
        if (got) tap_diag("got  [%s]\n# want [%s]", got, want);
        else tap_diag("failed: %s: line %d: %s (want [%s])", jinja_status_name(err.status), err.line, err.msg, want);
    }
    free(got);
}

static void expect(const char *tmpl, const char *want) { expect_v(tmpl, NULL, want); }

static void expect_err_v(const char *tmpl, const char *vars, jinja_status st, const char *msg_part)
{
    jinja_error err;
    char *got = render(tmpl, vars, &err);
    bool ok = !got && err.status == st && (!msg_part || strstr(err.msg, msg_part));
    if (!tap_ok(ok, "fails (%s): %s", jinja_status_name(st), tmpl)) {
        if (got) tap_diag("rendered [%s]", got);
        else tap_diag("%s: line %d: %s", jinja_status_name(err.status), err.line, err.msg);
    }
    free(got);
}

static void expect_err(const char *tmpl, jinja_status st, const char *msg_part)
{
    expect_err_v(tmpl, NULL, st, msg_part);
}

/* ---- corpus --------------------------------------------------------------- */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) {
        b[n] = 0;
        *len = (size_t)n;
    }
    return b;
}

/* The case files are read with the engine's own JSON reader; each case's
   variables go back to JSON text for jinja_vars_update_json, which
   exercises both directions. */
typedef struct corpus {
    jx_ctx c;
    jx_arena a;
    jinja_error err;
} corpus;

static jx_val *member(jx_val obj, const char *key)
{
    return obj.t == JT_DICT ? jx_dict_finds(obj.u.d, key, strlen(key)) : NULL;
}

static int corpus_total, corpus_match;

static void first_diff(const char *got, const char *want)
{
    size_t i = 0;
    while (got[i] && got[i] == want[i]) i++;
    size_t from = i > 60 ? i - 60 : 0;
    tap_diag("first difference at byte %zu:\n#  got  ...%.120s\n#  want ...%.120s", i, got + from, want + from);
}

static void run_cases(const char *dir, const char *cases_name, char **tmpls, int *n_tmpls)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, cases_name);
    size_t len;
    char *text = slurp(path, &len);
    corpus *k = calloc(1, sizeof *k);
    if (!text || !k) {
        tap_ok(0, "%s: readable", cases_name);
        free(text);
        free(k);
        return;
    }
    k->c.a = &k->a;
    k->c.fail.err = &k->err;
    k->c.max_steps = UINT64_MAX;
    k->c.max_depth = 1000;
    k->c.out_max = SIZE_MAX;
    k->a.fail = &k->c.fail;
    char *tmpl = NULL;
    if (setjmp(k->c.fail.jb)) {
        tap_ok(0, "%s: %s", cases_name, k->err.msg);
        goto done;
    }
    jx_val doc = jx_json_parse(&k->a, &k->c.fail, text, len);
    jx_val *tname = member(doc, "template"), *cases = member(doc, "cases");
    if (!tname || tname->t != JT_STR || !cases || cases->t != JT_LIST) {
        tap_ok(0, "%s: has template and cases", cases_name);
        goto done;
    }
    snprintf(path, sizeof path, "%s/%s", dir, tname->u.s->s);
    size_t tlen;
    tmpl = slurp(path, &tlen);
    if (!tmpl) {
        tap_ok(0, "%s: template %s readable", cases_name, tname->u.s->s);
        goto done;
    }
    jinja_error perr;
    jinja_template *t = jinja_parse(tmpl, tlen, &perr);
    if (!tap_ok(t != NULL, "%s parses", tname->u.s->s)) {
        tap_diag("line %d: %s", perr.line, perr.msg);
        goto done;
    }
    int matched = 0, n = (int)cases->u.l->n;
    for (int i = 0; i < n; i++) {
        jx_val cs = cases->u.l->v[i];
        jx_val *vars = member(cs, "vars"), *want = member(cs, "expected"), *want_err = member(cs, "error");
        jx_sb b;
        jx_sb_init(&b, &k->a);
        jx_json_fmt fmt = {-1, NULL, ", ", ": ", false, false};
        jx_json_dump(&k->c, &b, vars ? *vars : jv_dict(&k->a), &fmt, 0);
        jinja_vars *v = jinja_vars_new();
        jinja_error err;
        char *got = NULL;
        if (jinja_vars_update_json(v, b.p, b.n, &err) == 0) {
            struct tm now = fixed_now();
            jinja_render_opts o = {&now, {0}};
            size_t glen;
            got = jinja_render(t, v, &o, &glen, &err);
        }
        bool ok;
        if (want && want->t == JT_STR) {
            ok = got && !strcmp(got, want->u.s->s);
            if (!ok && getenv("JINJA_TEST_VERBOSE")) {
                if (got) first_diff(got, want->u.s->s);
                else tap_diag("case %d failed: %s: line %d: %s", i, jinja_status_name(err.status), err.line, err.msg);
            }
        } else {
            /* "TemplateError: message": the template's own message must come back */
            const char *w = want_err && want_err->t == JT_STR ? want_err->u.s->s : "";
            const char *colon = strstr(w, ": ");
            const char *msg = colon ? colon + 2 : w;
            ok = !got && !strcmp(err.msg, msg);
            if (!ok && getenv("JINJA_TEST_VERBOSE"))
                tap_diag("case %d: want error [%s], got %s [%s]", i, w, got ? "text" : "error", got ? got : err.msg);
        }
        matched += ok;
        free(got);
        jinja_vars_free(v);
    }
    jinja_template_free(t);
    corpus_total += n;
    corpus_match += matched;
    tap_ok(matched == n, "%s: %d of %d cases match", tname->u.s->s, matched, n);
    if (*n_tmpls < 64) tmpls[(*n_tmpls)++] = tmpl, tmpl = NULL;
done:
    free(tmpl);
    jx_arena_free(&k->a);
    free(k);
    free(text);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* ---- fuzz ------------------------------------------------------------------ */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *const fuzz_bits[] = {
    "{{", "}}", "{%", "%}", "{#", "#}", "{%-", "-%}", "{% for x in messages %}", "{% endfor %}",
    "{% if ", "{% endif %}", "{% set ns = namespace(a=1) %}", "{{ ns.a }}", "(", ")", "[", "]", "'",
    "\"", "|", " is ", " not ", "loop.", "{% macro m(a) %}", "{% endmacro %}", "{{ m(1) }}", "\\",
    "{% raw %}", "{% endraw %}", "~", "**", "//", "[::-1]", "|tojson", "|length", ".split(", "range(",
};

static void fuzz(char **tmpls, int n_tmpls)
{
    static const char vars[] =
        "{\"messages\": [{\"role\": \"system\", \"content\": \"be brief\"}, {\"role\": \"user\", "
        "\"content\": \"hi {{x}} <b>\"}, {\"role\": \"assistant\", \"content\": \"yo\", \"tool_calls\": "
        "[{\"function\": {\"name\": \"f\", \"arguments\": {\"a\": 1}}}]}], \"add_generation_prompt\": true, "
        "\"bos_token\": \"<s>\", \"eos_token\": \"</s>\", \"tools\": [{\"type\": \"function\", \"function\": "
        "{\"name\": \"f\", \"parameters\": {\"type\": \"object\"}}}]}";
    jinja_limits lim = {2000000, 1 << 20, 64 << 20, 0};
    int rendered = 0, failed = 0, bad_status = 0;
    for (int iter = 0; iter < 400; iter++) {
        const char *src = n_tmpls ? tmpls[rnd() % (uint64_t)n_tmpls] : "{{ messages[0].content }}";
        size_t n = strlen(src);
        char *m = malloc(n + 4096);
        memcpy(m, src, n);
        int edits = 1 + (int)(rnd() % 8);
        for (int e = 0; e < edits; e++) {
            size_t at = n ? rnd() % (n + 1) : 0;
            switch (rnd() % 4) {
            case 0:                           /* delete a span */
                if (n) {
                    size_t k = 1 + rnd() % 16;
                    if (at + k > n) k = n - at;
                    memmove(m + at, m + at + k, n - at - k);
                    n -= k;
                }
                break;
            case 1: {                         /* insert a piece of syntax */
                const char *bit = fuzz_bits[rnd() % (sizeof fuzz_bits / sizeof fuzz_bits[0])];
                size_t k = strlen(bit);
                if (n + k < n + 4000) {
                    memmove(m + at + k, m + at, n - at);
                    memcpy(m + at, bit, k);
                    n += k;
                }
                break;
            }
            case 2:                           /* flip a byte */
                if (at < n) m[at] = (char)(rnd() & 0xFF);
                break;
            default:                          /* duplicate a span */
                if (n && n < 200000) {
                    size_t k = 1 + rnd() % 64;
                    if (at + k > n) k = n - at;
                    memmove(m + at + k, m + at, n - at);
                    n += k;
                }
            }
        }
        m[n] = 0;
        jinja_error err;
        char *out = render_lim(m, vars, &lim, &err);
        if (out) rendered++;
        else {
            failed++;
            if (err.status == JINJA_OK || !err.msg[0]) bad_status++;
        }
        free(out);
        free(m);
    }
    tap_ok(bad_status == 0, "fuzz: 400 mutated templates, %d rendered, %d failed with a message", rendered, failed);
}

/* ---- the language ------------------------------------------------------------- */
static void test_basics(void)
{
    expect("hello", "hello");
    expect("{{ 'a' ~ 1 ~ none ~ true }}", "a1NoneTrue");
    expect("{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 7 % 3 }}|{{ -7 % 3 }}|{{ 2 ** 10 }}",
           "7|9|3|-4|1|2|1024");
    expect("{{ 7 / 2 }}|{{ 6 / 2 }}|{{ 1.5 + 1 }}|{{ 0.1 + 0.2 }}|{{ 1e20 }}|{{ 1e-5 }}|{{ 2 ** -1 }}",
           "3.5|3.0|2.5|0.30000000000000004|1e+20|1e-05|0.5");
    expect("{{ 'ab' * 3 }}|{{ [1] * 2 }}|{{ 'a' + 'b' }}|{{ [1] + [2] }}", "ababab|[1, 1]|ab|[1, 2]");
    expect("{{ [1, 'a', none, true, 1.5, (1,), {'k': 'v'}] }}", "[1, 'a', None, True, 1.5, (1,), {'k': 'v'}]");
    expect("{{ \"it's\" }}|{{ ['it\\'s', \"q\\\"\"] }}", "it's|[\"it's\", 'q\"']");
    expect("{{ 'a\\tb\\n' }}|{{ '\\u00e9\\x41' }}|{{ 'x' 'y' }}", "a\tb\n|\xc3\xa9" "A|xy");
    expect("{{ true }}{{ True }}{{ false }}{{ none }}{{ None }}", "TrueTrueFalseNoneNone");
    expect("{{ 1 < 2 < 3 }}{{ 3 > 2 > 2 }}{{ 1 == 1.0 }}{{ 'a' != 'b' }}{{ 2 >= 2 }}", "TrueFalseTrueTrueTrue");
    expect("{{ 'b' in 'abc' }}{{ 2 in [1, 2] }}{{ 'k' in {'k': 1} }}{{ 3 not in [1] }}", "TrueTrueTrueTrue");
    expect("{{ not true }}|{{ 0 or 'x' }}|{{ 1 and 2 }}|{{ '' and 1 }}|{{ none or none }}", "False|x|2||None");
    expect("{{ 'y' if 1 else 'n' }}|{{ 'y' if 0 else 'n' }}|{{ 'y' if 0 }}|", "y|n||");
    expect("{{ -3|abs }}|{{ -(3) }}|{{ +3 }}|{{ - 2 ** 2 }}", "3|-3|3|4");
    expect("{{ 'a' ~ 1 + 2 if false else 'ok' }}", "ok");
    expect("{{ 1, 2 }}|{{ (1, 2)[1] }}|{{ () }}", "(1, 2)|2|()");
    expect("{{ {'a': 1, 'b': [1, 2]} }}", "{'a': 1, 'b': [1, 2]}");
    expect("{{ 10 // 3 * 3 + 10 % 3 }}", "10");
    expect("{{ 0x1F }}|{{ 1_000 }}|{{ 3.25e2 }}", "31|1000|325.0");
}

static void test_access(void)
{
    const char *v = "{\"d\": {\"a\": 1, \"b\": {\"c\": \"x\"}, \"items\": 5}, \"l\": [10, 20, 30, 40], \"s\": \"h\\u00e9llo\"}";
    expect_v("{{ d.a }}|{{ d['a'] }}|{{ d.b.c }}|{{ d['b']['c'] }}|{{ l[1] }}|{{ l[-1] }}|{{ l.0 }}", v, "1|1|x|x|20|40|10");
    expect_v("{{ d.zz }}|{{ l[10] }}|{{ d['items'] }}|{{ none.foo }}", v, "||5|");
    expect_v("{{ l[1:3] }}|{{ l[::-1] }}|{{ l[:-1] }}|{{ l[::2] }}|{{ l[5:] }}|{{ l[-2:] }}", v,
             "[20, 30]|[40, 30, 20, 10]|[10, 20, 30]|[10, 30]|[]|[30, 40]");
    expect_v("{{ s[1] }}|{{ s[1:3] }}|{{ s[::-1] }}|{{ s|length }}|{{ s[-1] }}", v,
             "\xc3\xa9|\xc3\xa9l|oll\xc3\xa9h|5|o");
    expect_v("{{ d.b.c.upper() }}|{{ d.get('a') }}|{{ d.get('q', 'dflt') }}|{{ d.get('q') }}", v, "X|1|dflt|None");
    expect_err_v("{{ d.zz.yy }}", v, JINJA_ERR_RUNTIME, "'dict object' has no attribute 'zz'");
    expect_err("{{ nope.attr }}", JINJA_ERR_RUNTIME, "'nope' is undefined");
    expect_err("{{ nope + 1 }}", JINJA_ERR_RUNTIME, "'nope' is undefined");
    expect_err("{{ nope() }}", JINJA_ERR_RUNTIME, "'nope' is undefined");
    expect("{{ nope }}|{{ nope is defined }}|{% for x in nope %}x{% endfor %}|{{ nope|length }}", "|False||0");
    expect_err("{{ 'a' + 1 }}", JINJA_ERR_RUNTIME, "can only concatenate str");
    expect_err("{{ 1 < 'a' }}", JINJA_ERR_RUNTIME, "not supported between");
    expect_err("{{ 1 / 0 }}", JINJA_ERR_RUNTIME, "division by zero");
}

int main(void)
{
    test_basics();
    test_access();

    char dir[1024];
    if (!tap_shared("fixtures/templates", dir, sizeof dir)) {
        tap_skip("corpus: ../shared/fixtures/templates not found");
        fuzz(NULL, 0);
        return tap_done();
    }
    DIR *d = opendir(dir);
    char *names[256];
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 11 && !strcmp(e->d_name + l - 11, ".cases.json")) names[n++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    char *tmpls[64];
    int n_tmpls = 0;
    for (int i = 0; i < n; i++) {
        run_cases(dir, names[i], tmpls, &n_tmpls);
        free(names[i]);
    }
    tap_ok(n > 0 && corpus_match == corpus_total, "corpus: %d of %d cases match in %d templates", corpus_match,
           corpus_total, n);
    fuzz(tmpls, n_tmpls);
    for (int i = 0; i < n_tmpls; i++) free(tmpls[i]);
    return tap_done();
}
