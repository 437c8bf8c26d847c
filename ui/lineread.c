/* libedit line reading for plain mode (lineread.h). */
#include "config.h"

#include <histedit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lineread.h"
#include "wrap.h"

struct ui_lineread {
    EditLine *el;
    History *hist;
    char *line;
};

static char *prompt(EditLine *el)
{
    (void)el;
    return (char *)"> ";
}

ui_lineread *ui_lineread_open(void)
{
    ui_lineread *lr = calloc(1, sizeof *lr);
    if (!lr) return NULL;
    ui_locale_text_utf8();   /* libedit reads the locale here, once */
    lr->el = el_init("ember", stdin, stderr, stderr);
    lr->hist = history_init();
    if (!lr->el || !lr->hist) {
        ui_lineread_close(lr);
        return NULL;
    }
    HistEvent ev;
    history(lr->hist, &ev, H_SETSIZE, 1000);
    history(lr->hist, &ev, H_SETUNIQUE, 1);
    el_set(lr->el, EL_EDITOR, "emacs");
    el_set(lr->el, EL_PROMPT, prompt);
    el_set(lr->el, EL_HIST, history, lr->hist);
    el_set(lr->el, EL_SIGNAL, 1);   /* the terminal back on Ctrl-C / Ctrl-Z */
    return lr;
}

const char *ui_lineread_get(ui_lineread *lr)
{
    int n = 0;
    const char *l = el_gets(lr->el, &n);
    if (!l || n <= 0) return NULL;
    free(lr->line);
    lr->line = strdup(l);
    if (!lr->line) return NULL;
    size_t k = strlen(lr->line);
    while (k && (lr->line[k - 1] == '\n' || lr->line[k - 1] == '\r')) lr->line[--k] = 0;
    if (k) {
        HistEvent ev;
        history(lr->hist, &ev, H_ENTER, lr->line);
    }
    return lr->line;
}

void ui_lineread_close(ui_lineread *lr)
{
    if (!lr) return;
    if (lr->el) el_end(lr->el);
    if (lr->hist) history_end(lr->hist);
    free(lr->line);
    free(lr);
}
