/* How a subcommand reports a usage error: one line naming the command and
   what is wrong, then where to look, exit status 2.  getopt's own messages
   ("unrecognized option", "requires an argument") came out in a different
   wording from the hand-written ones and were followed by the whole usage,
   which buried the one line that mattered. */
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cmd);
    vfprintf(stderr, fmt, ap);
    /* plain "ember" is the chat, whose options are ember chat --help */
    fprintf(stderr, " (try %s%s --help)\n", cmd, strcmp(cmd, "ember") ? "" : " chat");
    va_end(ap);
    return 2;
}

/* Whether NAME (LEN bytes) is the long option OPT that takes no value. */
static int long_without_value(const struct option *longopts, const char *name, size_t len, int val)
{
    for (const struct option *o = longopts; o && o->name; o++)
        if (strlen(o->name) >= len && !strncmp(o->name, name, len) && o->val == val && o->has_arg == no_argument)
            return 1;
    return 0;
}

int cli_getopt_error(const char *cmd, char **argv, const struct option *longopts, int c)
{
    /* The element getopt stopped at is argv[optind - 1] for a long option
       and a short option ending its cluster; a short option in the middle
       of a cluster ("-zq") is named by optopt alone. */
    const char *el = argv[optind - 1];
    int lng = el && !strncmp(el, "--", 2) && el[2];
    int len = lng ? (int)strcspn(el, "=") : 0;
    if (c == ':') {
        /* a missing value is at the end of the line: el is the option */
        if (lng) return cli_usage_error(cmd, "option '%.*s' needs a value", len, el);
        return cli_usage_error(cmd, "option '-%c' needs a value", optopt);
    }
    if (optopt) {
        if (lng && el[len] == '=' && long_without_value(longopts, el + 2, (size_t)len - 2, optopt))
            return cli_usage_error(cmd, "option '%.*s' takes no value", len, el);
        return cli_usage_error(cmd, "unknown option '-%c'", optopt);
    }
    if (!lng) return cli_usage_error(cmd, "unknown option '%s'", el ? el : "?");   /* not expected of getopt */
    /* an abbreviation that fits several long options names them */
    char cand[160] = "";
    size_t n = 0;
    int hits = 0;
    for (const struct option *o = longopts; o && o->name; o++) {
        if (strncmp(o->name, el + 2, (size_t)len - 2) != 0) continue;
        if (strlen(o->name) == (size_t)len - 2) {
            hits = 1;   /* an exact name is never ambiguous */
            break;
        }
        hits++;
        if (n < sizeof cand) n += (size_t)snprintf(cand + n, sizeof cand - n, "%s--%s", n ? ", " : "", o->name);
    }
    if (hits > 1) return cli_usage_error(cmd, "option '%.*s' is ambiguous (%s)", len, el, cand);
    return cli_usage_error(cmd, "unknown option '%.*s'", len, el);
}
