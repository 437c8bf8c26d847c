/* ember chats: list the saved conversations, remove one. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chatlog.h"
#include "cli.h"
#include "ember.h"
#include "json.h"
#include "wrap.h"

static void usage(FILE *out)
{
    char dir[4096];
    ember_err e;
    bool have = chatlog_dir(dir, sizeof dir, false, &e) == 0;
    fprintf(out,
        "Usage: ember chats [--json]\n"
        "       ember chats rm ID\n"
        "\n"
        "Lists the saved conversations, oldest first: id, last update, model, turns and\n"
        "the first line of the first message. Every chat is saved after each turn; reopen\n"
        "one with ember --resume ID (a unique prefix of the id is enough) or the last\n"
        "one with ember -c.  rm deletes one.  Files that do not read (damaged, or\n"
        "written by a newer Ember) are reported and skipped.\n"
        "\n"
        "      --json     one JSON array instead of the table\n"
        "  -h, --help     this help\n"
        "\n"
        "Conversations are kept in %s.\n",
        have ? dir : "$XDG_STATE_HOME/ember/chats");
}

static void warn_stderr(void *ud, const char *msg) { fprintf(stderr, "ember chats: %s\n", msg); }

static void print_json(const chatlog_entry *v, int n)
{
    json_w j;
    json_init(&j, stdout, true);
    json_arr_begin(&j);
    for (int i = 0; i < n; i++) {
        char t[40];
        json_obj_begin(&j);
        json_kv_str(&j, "id", v[i].id);
        time_t c = (time_t)v[i].created, u = (time_t)v[i].updated;
        strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%SZ", gmtime(&c));
        json_kv_str(&j, "created", t);
        strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%SZ", gmtime(&u));
        json_kv_str(&j, "updated", t);
        json_kv_str(&j, "model", v[i].model);
        json_kv_i64(&j, "turns", v[i].turns);
        json_kv_str(&j, "first", v[i].first);
        json_key(&j, "open_pid");   /* the Ember that has it open, or null */
        if (v[i].open_pid) json_i64(&j, v[i].open_pid);
        else json_null_value(&j);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_finish(&j);
}

/* Pads s (UTF-8) to cols columns, cutting it when longer. */
static void cell(const char *s, int cols)
{
    int used = 0;
    size_t k = ui_fit(s, strlen(s), cols, &used);
    printf("%.*s%*s", (int)k, s, cols - used, "");
}

static int list(bool as_json)
{
    chatlog_entry *v;
    ember_err e = {{0}};
    int n = chatlog_list(&v, warn_stderr, NULL, &e);
    if (n < 0) {
        fprintf(stderr, "ember chats: %s\n", e.msg);
        return 1;
    }
    if (as_json) print_json(v, n);
    else if (n == 0) fprintf(stderr, "ember chats: no saved conversations yet\n");
    else {
        int idw = 2;
        for (int i = 0; i < n; i++)
            if ((int)strlen(v[i].id) > idw) idw = (int)strlen(v[i].id);
        printf("%-*s  %-16s  ", idw, "ID", "UPDATED");
        cell("MODEL", 24);
        printf("  TURNS  FIRST MESSAGE\n");
        for (int i = 0; i < n; i++) {
            char t[40];
            chatlog_fmt_time(v[i].updated, t, sizeof t);
            printf("%-*s  %-16s  ", idw, v[i].id, t);
            cell(v[i].model[0] ? v[i].model : "?", 24);
            printf("  %5d  ", v[i].turns);
            if (v[i].open_pid) printf("(open in pid %ld) ", v[i].open_pid);
            printf("%s\n", v[i].first);
        }
    }
    free(v);
    return 0;
}

int cmd_chats(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    bool as_json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        if (c == 'j') {
            as_json = true;
            continue;
        }
        return cli_getopt_error("ember chats", argv, opts, c);
    }
    if (optind == argc) return list(as_json);
    if (!strcmp(argv[optind], "rm")) {
        if (optind + 2 != argc) {
            fprintf(stderr, "ember chats rm: give one conversation id (see ember chats)\n");
            return 2;
        }
        char id[CHATLOG_ID_MAX];
        ember_err e = {{0}};
        if (chatlog_remove(argv[optind + 1], id, &e) < 0) {
            fprintf(stderr, "ember chats rm: %s\n", e.msg);
            return 1;
        }
        printf("removed conversation %s\n", id);
        return 0;
    }
    return cli_usage_error("ember chats", "unknown argument '%s'", argv[optind]);
}
