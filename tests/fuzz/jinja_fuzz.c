/* Fuzz harness for the Jinja interpreter: the input is a template, parsed
 * and rendered (under small limits) with a conversation that has tools,
 * tool calls and non-ASCII text.  Any input must end in text or an error
 * with a message; a crash, a sanitizer report or a hang is a bug.
 *
 * With libFuzzer (clang), from a configured build directory B (config.h)
 * and the source tree S:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DEMBER_LIBFUZZER \
 *     -I$B -I$S/engine/text -I$S/engine $S/tests/fuzz/jinja_fuzz.c $S/engine/text/jinja_*.c \
 *     $S/engine/text/utf8.c -lm -o jinja_fuzz
 *   cp -r $S/tests/fuzz/jinja_corpus /tmp/jcorp    (libFuzzer writes into it)
 *   ./jinja_fuzz -max_total_time=60 -max_len=4096 -dict=$S/tests/fuzz/jinja.dict /tmp/jcorp
 *
 * Without -DEMBER_LIBFUZZER, main() runs each file (or every file of each
 * directory) named on the command line, or with no arguments every file in
 * $EMBER_SRCDIR/tests/fuzz/jinja_corpus, printing TAP. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jinja.h"

static const char vars_json[] =
    "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"},"
    " {\"role\": \"user\", \"content\": \"Gr\\u00fc\\u00dfe {{x}} <b> \\\"q\\\"\\n\\ttab\"},"
    " {\"role\": \"assistant\", \"content\": \"\", \"reasoning_content\": \"hmm\", \"tool_calls\":"
    " [{\"id\": \"c1\", \"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": {\"a\": [1, 2.5, null, true]}}}]},"
    " {\"role\": \"tool\", \"content\": \"{\\\"r\\\": 1}\", \"tool_call_id\": \"c1\"},"
    " {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"part\"}, {\"type\": \"image\"}]}],"
    " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"description\": \"d\","
    " \"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"array\"}}, \"required\": [\"a\"]}}}],"
    " \"add_generation_prompt\": true, \"bos_token\": \"<s>\", \"eos_token\": \"</s>\", \"enable_thinking\": false}";

/* 0: rendered, 1: failed with a message, -1: failed without one (a bug) */
static int run_one(const uint8_t *data, size_t size)
{
    jinja_error err;
    jinja_template *t = jinja_parse((const char *)data, size, &err);
    if (!t) return err.status != JINJA_OK && err.msg[0] ? 1 : -1;
    jinja_vars *v = jinja_vars_new();
    int rc = -1;
    if (v && jinja_vars_update_json(v, vars_json, sizeof vars_json - 1, &err) == 0) {
        struct tm now = {0};
        now.tm_year = 126;
        now.tm_mon = 11;
        now.tm_mday = 2;
        jinja_render_opts o = {&now, {200000, 1 << 20, 32 << 20, 0}};
        size_t len;
        char *out = jinja_render(t, v, &o, &len, &err);
        if (out) rc = out[len] == 0 ? 0 : -1;
        else rc = err.status != JINJA_OK && err.msg[0] ? 1 : -1;
        free(out);
    }
    jinja_vars_free(v);
    jinja_template_free(t);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (run_one(data, size) < 0) abort();
    return 0;
}

#ifndef EMBER_LIBFUZZER
static int n_tests, n_failed;

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!buf) return;
    int rc = run_one(buf, got);
    n_tests++;
    if (rc < 0) n_failed++;
    printf("%s %d - %s: %s\n", rc < 0 ? "not ok" : "ok", n_tests, path,
           rc == 0 ? "rendered" : rc == 1 ? "failed with a message" : "failed without a message");
    free(buf);
}

static void run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) {
        run_file(path);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        run_file(p);
    }
    if (d) closedir(d);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        for (int i = 1; i < argc; i++) run_path(argv[i]);
    } else {
        const char *src = getenv("EMBER_SRCDIR");
        char p[4096];
        snprintf(p, sizeof p, "%s/tests/fuzz/jinja_corpus", src ? src : ".");
        run_path(p);
    }
    if (!n_tests) {
        printf("1..0 # SKIP no corpus files\n");
        return 0;
    }
    printf("1..%d\n", n_tests);
    return n_failed ? 1 : 0;
}
#endif
