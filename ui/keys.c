/* The key-binding table (keys.h). */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "keys.h"

const ui_key ui_keys[] = {
    {"Enter", "send the message (after a trailing \\: a new line)", '\r', false, KA_ENTER},
    {"Alt-Enter", "a new line", 0, false, KA_EDIT},
    {"Esc", "stop the reply; leave the history search; cancel /model's download", 0x1b, false, KA_ESCAPE},
    {"Ctrl-C", "stop the reply; clear the line; twice on an empty line: quit", 3, false, KA_CTRL_C},
    {"Ctrl-D", "quit on an empty line (else delete the character)", 4, false, KA_CTRL_D},
    {"F1", "the commands and keys (as /help)", KEY_F(1), true, KA_HELP},
    {"F2", "switch to the next profile (reloads the model; during a reply: stops it first)", KEY_F(2), true, KA_NEXT_PROFILE},
    {"F3", "show or hide the memory panel", KEY_F(3), true, KA_MEMPANEL},
    {"F4", "replies as raw text / as Markdown (as /raw)", KEY_F(4), true, KA_RAW},
    {"F5", "unfold / fold the replies' thinking (as /think)", KEY_F(5), true, KA_THINK},
    {"PgUp", "scroll the transcript up", KEY_PPAGE, true, KA_PAGE_UP},
    {"PgDn", "scroll the transcript down", KEY_NPAGE, true, KA_PAGE_DOWN},
    {"Up", "the line above in a draft of several lines, else the previous history entry", 0, false, KA_EDIT},
    {"Down", "the line below, else the next history entry", 0, false, KA_EDIT},
    {"Ctrl-P", "previous history entry", 0, false, KA_EDIT},
    {"Ctrl-N", "next history entry", 0, false, KA_EDIT},
    {"Ctrl-R", "search the history (again: older match; Enter takes it)", 0x12, false, KA_SEARCH},
    {"Tab", "complete a /command, a /set key, a /profile name, a /load id or a /model name", '\t', false, KA_COMPLETE},
    {"Ctrl-L", "redraw the screen", 0x0c, false, KA_REDRAW},
    {"Ctrl-Z", "suspend (fg resumes and redraws)", 0x1a, false, KA_SUSPEND},
    {"Ctrl-X Ctrl-E", "edit the draft in $VISUAL or $EDITOR (as /edit)", 0x18, false, KA_CTRL_X},
    {NULL, NULL, 0, false, KA_EDIT},
};

ui_key_action ui_key_lookup(int code, bool fkey)
{
    if (!fkey && code == '\n') code = '\r';
    for (const ui_key *k = ui_keys; k->label; k++)
        if (k->action != KA_EDIT && k->fkey == fkey && k->code == code) return k->action;
    return KA_EDIT;
}

void ui_keys_text(char *buf, size_t cap, const char *indent)
{
    size_t used = 0;
    if (cap) buf[0] = 0;
    for (const ui_key *k = ui_keys; k->label && used < cap; k++) {
        int w = snprintf(buf + used, cap - used, "%s%-10s %s\n", indent, k->label, k->help);
        if (w < 0) break;
        used += (size_t)w;
    }
    if (used < cap)
        snprintf(buf + used, cap - used, "%s%-10s %s\n", indent, "editing",
                 "emacs keys: Ctrl-A/E (the line's start/end), B/F/K/U/W/Y/T, Alt-B/F/D");
}

void ui_keys_print(FILE *out, const char *indent)
{
    char buf[2048];
    ui_keys_text(buf, sizeof buf, indent);
    fputs(buf, out);
}
