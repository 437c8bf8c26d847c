/* Slash-command parsing, validation and tab completion. */
#include "config.h"

#include <string.h>

#include <curses.h>

#include "keys.h"
#include "slash.h"
#include "tap.h"

static int argis(const ui_slash *s, const char *want)
{
    return s->arg_len == strlen(want) && !strncmp(s->arg, want, s->arg_len);
}

int main(void)
{
    ui_slash s;
    ui_slash_parse("hello there", &s);
    tap_ok(s.kind == SL_NONE && argis(&s, "hello there"), "plain text is a message");
    ui_slash_parse("//etc/passwd is a path", &s);
    tap_ok(s.kind == SL_NONE && argis(&s, "/etc/passwd is a path"), "// escapes a leading slash");
    ui_slash_parse("/help", &s);
    tap_ok(s.kind == SL_HELP, "/help");
    ui_slash_parse("/quit  ", &s);
    tap_ok(s.kind == SL_QUIT, "/quit with trailing spaces");
    ui_slash_parse("/quit now", &s);
    tap_ok(s.kind == SL_ERROR && strstr(s.err, "no argument"), "/quit with an argument is an error");
    ui_slash_parse("/clear", &s);
    tap_ok(s.kind == SL_CLEAR, "/clear");
    ui_slash_parse("/regen", &s);
    tap_ok(s.kind == SL_REGEN, "/regen");
    ui_slash_parse("/stats", &s);
    tap_ok(s.kind == SL_STATS, "/stats");
    ui_slash_parse("/system   You are terse.  ", &s);
    tap_ok(s.kind == SL_SYSTEM && argis(&s, "You are terse."), "/system TEXT trimmed");
    ui_slash_parse("/system", &s);
    tap_ok(s.kind == SL_SYSTEM && s.arg_len == 0, "/system alone clears");
    ui_slash_parse("/profile packed-decode", &s);
    tap_ok(s.kind == SL_PROFILE && argis(&s, "packed-decode"), "/profile NAME");
    ui_slash_parse("/profile", &s);
    tap_ok(s.kind == SL_PROFILE && s.arg_len == 0, "/profile lists");
    ui_slash_parse("/save out/chat.md", &s);
    tap_ok(s.kind == SL_SAVE && argis(&s, "out/chat.md"), "/save FILE");
    ui_slash_parse("/save", &s);
    tap_ok(s.kind == SL_ERROR && strstr(s.err, "/save needs FILE"), "/save without a file is an error");
    ui_slash_parse("/sav x", &s);
    tap_ok(s.kind == SL_ERROR && strstr(s.err, "unknown command '/sav'"), "prefixes are not commands: %s", s.err);
    ui_slash_parse("/helpme", &s);
    tap_ok(s.kind == SL_ERROR, "/helpme is unknown");
    ui_slash_parse("/raw", &s);
    tap_ok(s.kind == SL_RAW, "/raw");
    ui_slash_parse("/raw on", &s);
    tap_ok(s.kind == SL_ERROR, "/raw takes no argument");
    ui_slash_parse("/copy", &s);
    tap_ok(s.kind == SL_COPY && s.ival == 0, "/copy: the last reply");
    ui_slash_parse("/copy 2 ", &s);
    tap_ok(s.kind == SL_COPY && s.ival == 2, "/copy 2: its second code block");
    ui_slash_parse("/copy all", &s);
    tap_ok(s.kind == SL_COPY && s.ival == -1, "/copy all: the whole chat");
    ui_slash_parse("/copy 0", &s);
    tap_ok(s.kind == SL_ERROR && strstr(s.err, "code block number"), "/copy 0 is an error: %s", s.err);
    ui_slash_parse("/copy 2x", &s);
    tap_ok(s.kind == SL_ERROR, "/copy 2x is an error");
    ui_slash_parse("/think", &s);
    tap_ok(s.kind == SL_THINK && s.ival == -1, "/think alone toggles");
    ui_slash_parse("/think show", &s);
    tap_ok(s.kind == SL_THINK && s.ival == 1, "/think show");
    ui_slash_parse("/think hide", &s);
    tap_ok(s.kind == SL_THINK && s.ival == 0, "/think hide");
    ui_slash_parse("/think loud", &s);
    tap_ok(s.kind == SL_ERROR && strstr(s.err, "show, hide"), "/think loud is an error: %s", s.err);
    ui_slash_parse("/info", &s);
    tap_ok(s.kind == SL_INFO, "/info");
    ui_slash_parse("/info x", &s);
    tap_ok(s.kind == SL_ERROR, "/info takes no argument");

    ui_slash_parse("/set temp 0.25", &s);
    tap_ok(s.kind == SL_SET && s.set_opt == OPT_TEMP && s.set_val.samp.temperature == 0.25f &&
           s.set_val.set == GEN_OPT_BIT(OPT_TEMP), "/set temp");
    ui_slash_parse("/set top_p 1", &s);
    tap_ok(s.kind == SL_SET && s.set_opt == OPT_TOP_P && s.set_val.samp.top_p == 1.0f, "/set top_p 1");
    ui_slash_parse("/set top_p 0", &s);
    tap_ok(s.kind == SL_ERROR && strstr(s.err, "(0, 1]"), "/set top_p 0 rejected: %s", s.err);
    ui_slash_parse("/set top_k 40", &s);
    tap_ok(s.kind == SL_SET && s.set_opt == OPT_TOP_K && s.set_val.samp.top_k == 40, "/set top_k");
    ui_slash_parse("/set top_k 4.5", &s);
    tap_ok(s.kind == SL_ERROR && !strcmp(s.err, "/set top_k: expected an integer in 0..1000000, got '4.5'"),
           "/set top_k 4.5 rejected: %s", s.err);
    ui_slash_parse("/set min_p 0.05", &s);
    tap_ok(s.kind == SL_SET && s.set_opt == OPT_MIN_P, "/set min_p");
    ui_slash_parse("/set seed 18446744073709551615", &s);
    tap_ok(s.kind == SL_SET && s.set_opt == OPT_SEED && s.set_val.samp.seed == 18446744073709551615ull,
           "/set seed u64 max");
    ui_slash_parse("/set seed -1", &s);
    tap_ok(s.kind == SL_ERROR, "/set seed -1 rejected");
    ui_slash_parse("/set seed 99999999999999999999", &s);
    tap_ok(s.kind == SL_ERROR, "/set seed overflow rejected");
    ui_slash_parse("/set n_predict -1", &s);
    tap_ok(s.kind == SL_SET && s.set_opt == OPT_N_PREDICT && s.set_val.n_predict == -1,
           "/set n_predict -1 = no limit");
    /* one meaning for 0 on the command line and in /set: refused by both */
    ui_slash_parse("/set n_predict 0", &s);
    gen_opts g;
    gen_opts_default(&g);
    char msg[256];
    numarg_status st = gen_opt_parse(OPT_N_PREDICT, "0", &g, msg, sizeof msg);
    tap_ok(s.kind == SL_ERROR && st == NUMARG_RANGE && strstr(s.err, msg) && g.n_predict == 1024,
           "/set n_predict 0 and -n 0 refused alike: %s", s.err);
    ui_slash_parse("/set n_predict 99999999999", &s);
    tap_ok(s.kind == SL_ERROR && strstr(s.err, "1..1048576"), "/set n_predict overflow refused: %s", s.err);
    ui_slash_parse("/set temp nan", &s);
    tap_ok(s.kind == SL_ERROR && !strcmp(s.err, "/set temp: expected a number in 0..100, got 'nan'"),
           "/set temp nan rejected: %s", s.err);
    ui_slash_parse("/set temp -1", &s);
    tap_ok(s.kind == SL_ERROR, "/set temp -1 rejected");
    ui_slash_parse("/set repeat_penalty 1.1", &s);
    tap_ok(s.kind == SL_SET && s.set_opt == OPT_REPEAT_PENALTY && s.set_val.samp.repeat_penalty == 1.1f,
           "/set repeat_penalty: every settable key of the table");
    ui_slash_parse("/set temp", &s);
    tap_ok(s.kind == SL_ERROR && strstr(s.err, "give a value"), "/set temp without value");
    ui_slash_parse("/set warmth 1", &s);
    tap_ok(s.kind == SL_ERROR && strstr(s.err, "unknown key 'warmth'") && strstr(s.err, "n_predict"),
           "/set unknown key: %s", s.err);
    ui_slash_parse("/set", &s);
    tap_ok(s.kind == SL_SET && s.set_opt == -1, "/set alone lists the values (not \"unknown key ''\")");
    ui_slash_parse("/set   ", &s);
    tap_ok(s.kind == SL_SET && s.set_opt == -1, "/set and blanks lists the values too");

    /* /help lists every command of the table; plain mode marks the others */
    char help[4096];
    ui_slash_help_text(false, help, sizeof help);
    int missing = 0, nc = 0;
    for (const ui_command *c = ui_commands; c->name; c++, nc++)
        if (!strstr(help, c->name)) missing++;
    tap_ok(nc >= 9 && missing == 0, "/help lists all %d commands", nc);
    int keys_missing = 0;
    for (const ui_key *k = ui_keys; k->label; k++)
        if (!strstr(help, k->label)) keys_missing++;
    tap_ok(keys_missing == 0, "/help lists every key of the key table");
    ui_slash_help_text(true, help, sizeof help);
    tap_ok(strstr(help, "/set") && strstr(help, "/save FILE") && strstr(help, "full-screen only") &&
           !strstr(help, "Ctrl-R"), "plain /help: commands, the full-screen ones marked, no keys");
    /* Ctrl-P is history (libedit's), not profile switching: only F2 switches */
    tap_ok(ui_key_lookup(0x10, false) == KA_EDIT && ui_key_lookup(KEY_F(2), true) == KA_NEXT_PROFILE,
           "Ctrl-P goes to the input line; F2 switches profile");

    char out[256], list[256];
    int n = ui_slash_complete("/he", NULL, 0, out, sizeof out, list, sizeof list);
    tap_ok(n == 1 && !strcmp(out, "/help "), "/he completes to '/help ' ('%s')", out);
    n = ui_slash_complete("/s", NULL, 0, out, sizeof out, list, sizeof list);
    tap_ok(n == 4 && !strcmp(out, "/s") && !strcmp(list, "/system /set /stats /save"),
           "/s lists four (%s)", list);
    n = ui_slash_complete("/sy", NULL, 0, out, sizeof out, list, sizeof list);
    tap_ok(n == 1 && !strcmp(out, "/system "), "/sy -> /system");
    n = ui_slash_complete("/set t", NULL, 0, out, sizeof out, list, sizeof list);
    tap_ok(n == 3 && !strcmp(out, "/set t") && !strcmp(list, "temp top_k top_p"), "/set t: %s", list);
    n = ui_slash_complete("/set top_", NULL, 0, out, sizeof out, list, sizeof list);
    tap_ok(n == 2 && !strcmp(out, "/set top_"), "/set top_ keeps the common prefix");
    n = ui_slash_complete("/set n", NULL, 0, out, sizeof out, list, sizeof list);
    tap_ok(n == 1 && !strcmp(out, "/set n_predict "), "/set n -> n_predict");
    const char *profs[] = {"compressed", "eager", "packed-decode", "packed-prefill"};
    n = ui_slash_complete("/profile pa", profs, 4, out, sizeof out, list, sizeof list);
    tap_ok(n == 2 && !strcmp(out, "/profile packed-"), "/profile pa -> packed- (%s)", out);
    n = ui_slash_complete("/profile e", profs, 4, out, sizeof out, list, sizeof list);
    tap_ok(n == 1 && !strcmp(out, "/profile eager "), "/profile e -> eager");
    const char *ids[] = {"20261203-161537-123-3fa9c2", "20261203-161540-001-00aa11", "20251101-090000-000-ffffff"};
    n = ui_slash_complete("/load 2026", ids, 3, out, sizeof out, list, sizeof list);
    tap_ok(n == 2 && !strcmp(out, "/load 20261203-1615"), "/load 2026 -> the ids' common start (%s)", out);
    n = ui_slash_complete("/load 2025", ids, 3, out, sizeof out, list, sizeof list);
    tap_ok(n == 1 && !strcmp(out, "/load 20251101-090000-000-ffffff "), "/load completes a whole id (%s)", out);
    n = ui_slash_complete("/x", NULL, 0, out, sizeof out, list, sizeof list);
    tap_ok(n == 0 && !strcmp(out, "/x"), "no candidate leaves the line");
    n = ui_slash_complete("hello", NULL, 0, out, sizeof out, list, sizeof list);
    tap_ok(n == 0, "plain text does not complete");
    n = ui_slash_complete("/save a b", NULL, 0, out, sizeof out, list, sizeof list);
    tap_ok(n == 0, "no completion past the first argument");
    return tap_done();
}
