/* ember template: render a chat template (Jinja) with a conversation and
   print the text the model would be fed, for checking a model's template
   or one under development. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach.h"
#include "cli.h"
#include "ember.h"
#include "model_arg.h"
#include "read_all.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember template (-m MODEL | --file T.jinja) --messages M.json [options]\n"
        "\n"
        "Renders a chat template with a conversation and prints the text, without\n"
        "a trailing newline.\n"
        "\n"
        "  -m, --model FILE          use the GGUF file's tokenizer.chat_template and its\n"
        "                            BOS / EOS token strings\n"
        "  -f, --file T.jinja        use the template in this file\n"
        "      --messages M.json     the conversation: a JSON array of {\"role\", \"content\"}\n"
        "                            messages, or an object whose members become variables\n"
        "                            (\"messages\", \"tools\", ...); '-' reads standard input\n"
        "      --no-generation-prompt  do not open the assistant's turn at the end\n"
        "      --now TIME            the time strftime_now() gives, ISO 8601\n"
        "                            (2026-12-02T12:00:00); default: the local time\n"
        "      --bos S, --eos S      bos_token / eos_token (default: the model's)\n"
        "      --var NAME=JSON       one more variable, e.g. --var enable_thinking=false\n"
        "  -h, --help                this help\n"
        "\n"
        "Exit status: 0 rendered, 1 the template failed (raise_exception, errors),\n"
        "2 usage errors or unreadable input.\n");
}

/* NULL with errno set (a directory opens but reads EISDIR; more than 1 GiB
   is EFBIG), so the message can say why. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return NULL;
    errno = 0;
    char *b = read_all_max(f, (size_t)1 << 30, len);
    int e = b ? 0 : errno ? errno : ENOMEM;
    if (f != stdin) fclose(f);
    errno = e;
    return b;
}

/* YYYY-MM-DD[THH:MM[:SS]] (a space may stand for the T). */
static bool parse_now(const char *s, struct tm *out)
{
    int y, mo, d, h = 0, mi = 0, sec = 0, used = 0;
    if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &used) != 3) return false;
    const char *p = s + used;
    if (*p == 'T' || *p == ' ') {
        int k = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &h, &mi, &k) != 2) return false;
        p += 1 + k;
        if (*p == ':') {
            if (sscanf(p + 1, "%2d%n", &sec, &k) != 1) return false;
            p += 1 + k;
        }
        if (*p == '.') {                      /* fractional seconds: ignored */
            p++;
            while (*p >= '0' && *p <= '9') p++;
        }
    }
    if (*p == 'Z') p++;
    if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
    struct tm tm = {0};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);                   /* fills the weekday and day of year */
    if (t == (time_t)-1 || !gmtime_r(&t, out)) return false;
    return out->tm_mday == d;
}

/* The string of token `key`'s id (tokenizer.ggml.bos_token_id ...). */
static char *token_string(const gguf_file *f, const char *key)
{
    uint64_t id;
    gguf_str s;
    const gguf_kv *toks = gguf_find(f, "tokenizer.ggml.tokens");
    if (!gguf_get_u64(f, key, &id) || !toks || !gguf_arr_str(toks, id, &s)) return NULL;
    char *r = malloc(s.len + 1);
    if (!r) return NULL;
    memcpy(r, s.ptr, s.len);
    r[s.len] = 0;
    return r;
}

#define MAX_VARS 32

int cmd_template(int argc, char **argv)
{
    enum { OPT_MESSAGES = 256, OPT_NO_GEN, OPT_NOW, OPT_BOS, OPT_EOS, OPT_VAR };
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"file", required_argument, NULL, 'f'},
        {"messages", required_argument, NULL, OPT_MESSAGES},
        {"no-generation-prompt", no_argument, NULL, OPT_NO_GEN},
        {"now", required_argument, NULL, OPT_NOW},
        {"bos", required_argument, NULL, OPT_BOS},
        {"eos", required_argument, NULL, OPT_EOS},
        {"var", required_argument, NULL, OPT_VAR},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *model = NULL, *file = NULL, *messages = NULL, *now_s = NULL, *bos = NULL, *eos = NULL;
    const char *vars_arg[MAX_VARS];
    int n_vars = 0;
    bool gen = true;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:f:h", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 'f': file = optarg; break;
        case OPT_MESSAGES: messages = optarg; break;
        case OPT_NO_GEN: gen = false; break;
        case OPT_NOW: now_s = optarg; break;
        case OPT_BOS: bos = optarg; break;
        case OPT_EOS: eos = optarg; break;
        case OPT_VAR:
            if (n_vars == MAX_VARS) {
                fprintf(stderr, "ember template: at most %d --var options\n", MAX_VARS);
                return 2;
            }
            vars_arg[n_vars++] = optarg;
            break;
        case 'h': usage(stdout); return 0;
        default: return cli_getopt_error("ember template", argv, opts, c);
        }
    }
    if (optind < argc) {
        return cli_usage_error("ember template", "unexpected argument '%s'", argv[optind]);
    }
    if (!model == !file) {
        fprintf(stderr, "ember template: give the template with exactly one of -m MODEL and --file T.jinja\n");
        return 2;
    }
    char hf_path[PATH_MAX];
    if (model_arg_resolve("ember template", &model, hf_path, sizeof hf_path)) return 1;
    if (!messages) {
        fprintf(stderr, "ember template: no conversation given: use --messages M.json\n");
        return 2;
    }
    struct tm now;
    if (now_s && !parse_now(now_s, &now)) {
        fprintf(stderr, "ember template: --now '%s' is not an ISO 8601 time such as 2026-12-02T12:00:00\n", now_s);
        return 2;
    }

    int rc = 2;
    char *tmpl = NULL, *msgs = NULL, *model_bos = NULL, *model_eos = NULL, *out = NULL;
    size_t tmpl_len = 0, msgs_len = 0;
    jinja_template *t = NULL;
    jinja_vars *v = NULL;
    jinja_error jerr;
    if (file) {
        tmpl = read_file(file, &tmpl_len);
        if (!tmpl) {
            fprintf(stderr, "ember template: cannot read template '%s': %s\n", file, strerror(errno));
            goto done;
        }
        /* a binary file rendered as literal text, exit 0 (a GGUF given by
           mistake for the model's template); synth refuses it the same way */
        if (!ui_attach_is_text(tmpl, tmpl_len)) {
            fprintf(stderr, "ember template: '%s' is not text (a NUL byte or not UTF-8)\n", file);
            goto done;
        }
    } else {
        ember_err err = {{0}};
        gguf_file *f = gguf_open(model, &err);
        if (!f) {
            fprintf(stderr, "ember template: %s\n", err.msg);
            goto done;
        }
        tmpl = gguf_get_strdup(f, "tokenizer.chat_template");
        model_bos = token_string(f, "tokenizer.ggml.bos_token_id");
        model_eos = token_string(f, "tokenizer.ggml.eos_token_id");
        gguf_close(f);
        if (!tmpl) {
            fprintf(stderr, "ember template: %s has no tokenizer.chat_template\n", model);
            goto done;
        }
        tmpl_len = strlen(tmpl);
    }
    msgs = read_file(messages, &msgs_len);
    if (!msgs) {
        fprintf(stderr, "ember template: cannot read messages '%s': %s\n", messages, strerror(errno));
        goto done;
    }

    v = jinja_vars_new();
    if (!v) {
        fprintf(stderr, "ember template: out of memory\n");
        goto done;
    }
    /* Defaults first, then the file's variables, then what the command line
       says explicitly: an object's "add_generation_prompt" or "bos_token"
       overrides the defaults but not --no-generation-prompt or --bos. */
    if (jinja_vars_set_bool(v, "add_generation_prompt", true, &jerr) ||
        (model_bos && jinja_vars_set_string(v, "bos_token", model_bos, &jerr)) ||
        (model_eos && jinja_vars_set_string(v, "eos_token", model_eos, &jerr))) {
        fprintf(stderr, "ember template: %s\n", jerr.msg);
        goto done;
    }
    /* An array is the messages; an object is a set of variables. */
    size_t k = 0;
    while (k < msgs_len && strchr(" \t\r\n", msgs[k])) k++;
    if (k < msgs_len && msgs[k] == '{') {
        if (jinja_vars_update_json(v, msgs, msgs_len, &jerr)) {
            fprintf(stderr, "ember template: %s: %s\n", messages, jerr.msg);
            goto done;
        }
    } else if (jinja_vars_set_json(v, "messages", msgs, msgs_len, &jerr)) {
        fprintf(stderr, "ember template: %s: %s\n", messages, jerr.msg);
        goto done;
    }
    if ((!gen && jinja_vars_set_bool(v, "add_generation_prompt", false, &jerr)) ||
        (bos && jinja_vars_set_string(v, "bos_token", bos, &jerr)) ||
        (eos && jinja_vars_set_string(v, "eos_token", eos, &jerr))) {
        fprintf(stderr, "ember template: %s\n", jerr.msg);
        goto done;
    }
    for (int i = 0; i < n_vars; i++) {
        const char *eq = strchr(vars_arg[i], '=');
        if (!eq || eq == vars_arg[i]) {
            fprintf(stderr, "ember template: --var '%s' is not NAME=JSON\n", vars_arg[i]);
            goto done;
        }
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(eq - vars_arg[i]), vars_arg[i]);
        if (jinja_vars_set_json(v, name, eq + 1, strlen(eq + 1), &jerr)) {
            fprintf(stderr, "ember template: --var %s: %s\n", name, jerr.msg);
            goto done;
        }
    }

    t = jinja_parse(tmpl, tmpl_len, &jerr);
    if (!t) {
        fprintf(stderr, "ember: template: %s:%d: %s\n", file ? file : "tokenizer.chat_template", jerr.line, jerr.msg);
        rc = 1;
        goto done;
    }
    jinja_render_opts ro = {now_s ? &now : NULL, {0}};
    size_t len;
    out = jinja_render(t, v, &ro, &len, &jerr);
    if (!out) {
        /* raise_exception's message is the template's own words: alone */
        if (jerr.status == JINJA_ERR_RAISED) fprintf(stderr, "ember: template: %s\n", jerr.msg);
        else fprintf(stderr, "ember: template: %s:%d: %s: %s\n", file ? file : "tokenizer.chat_template", jerr.line,
                     jinja_status_name(jerr.status), jerr.msg);
        rc = 1;
        goto done;
    }
    if (fwrite(out, 1, len, stdout) != len || fflush(stdout)) {
        fprintf(stderr, "ember template: cannot write the output\n");
        rc = 1;
        goto done;
    }
    rc = 0;
done:
    free(out);
    jinja_template_free(t);
    jinja_vars_free(v);
    free(tmpl);
    free(msgs);
    free(model_bos);
    free(model_eos);
    return rc;
}
