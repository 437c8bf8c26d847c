/* Transcript storage and the Markdown export. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "markdown.h"
#include "ember.h"
#include "transcript.h"

void tr_init(transcript *t) { memset(t, 0, sizeof *t); }

void tr_clear(transcript *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->e[i].text);
        md_free(t->e[i].md);
    }
    t->n = 0;
    t->scroll = 0;
}

void tr_free(transcript *t)
{
    tr_clear(t);
    free(t->e);
    memset(t, 0, sizeof *t);
}

const char *tr_label(tr_role r)
{
    switch (r) {
    case TR_USER: return "you";
    case TR_ASSISTANT: return "assistant";
    case TR_SYSTEM: return "system";
    case TR_NOTICE: return "note";
    case TR_ERROR: return "error";
    case TR_INFO: return "";
    }
    return "";
}

int tr_add(transcript *t, tr_role role, const char *text)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        tr_entry *e = realloc(t->e, cap * sizeof *e);
        if (!e) return -1;
        t->e = e;
        t->cap = cap;
    }
    tr_entry *e = &t->e[t->n];
    memset(e, 0, sizeof *e);
    e->role = role;
    size_t n = strlen(text);
    e->cap = n + 64;
    e->text = malloc(e->cap);
    if (!e->text) return -1;
    memcpy(e->text, text, n + 1);
    e->len = n;
    return (int)t->n++;
}

void tr_append(transcript *t, int i, const char *text, size_t n)
{
    if (i < 0 || (size_t)i >= t->n) return;
    tr_entry *e = &t->e[i];
    if (e->len + n + 1 > e->cap) {
        size_t cap = (e->len + n + 1) * 2;
        char *p = realloc(e->text, cap);
        if (!p) return;
        e->text = p;
        e->cap = cap;
    }
    memcpy(e->text + e->len, text, n);
    e->len += n;
    e->text[e->len] = 0;
}

void tr_remove(transcript *t, int i)
{
    if (i < 0 || (size_t)i >= t->n) return;
    free(t->e[i].text);
    md_free(t->e[i].md);
    memmove(&t->e[i], &t->e[i + 1], (t->n - (size_t)i - 1) * sizeof *t->e);
    t->n--;
}

void tr_write_markdown(const transcript *t, FILE *f, const char *model)
{
    fprintf(f, "# Chat with %s\n\n", model && *model ? model : "ember");
    for (size_t i = 0; i < t->n; i++) {
        const tr_entry *e = &t->e[i];
        const char *h = e->role == TR_USER ? "User" : e->role == TR_ASSISTANT ? "Assistant"
                      : e->role == TR_SYSTEM ? "System" : NULL;
        if (!h) continue;
        fprintf(f, "## %s\n\n%s%s\n\n", h, e->text, e->cancelled ? " *(stopped)*" : "");
    }
}

/* "~" and "~/x" name the home directory, as in a shell: /save ~/chat.md
   must not create a directory called "~". */
static const char *expand_home(const char *path, char *buf, size_t cap)
{
    const char *home = getenv("HOME");
    if (path[0] != '~' || (path[1] && path[1] != '/') || !home || !*home) return path;
    int n = snprintf(buf, cap, "%s%s", home, path + 1);
    return n > 0 && (size_t)n < cap ? buf : path;
}

int tr_save_markdown(const transcript *t, const char *path, const char *model,
                     char *err, size_t errcap)
{
    char full[4096];
    path = expand_home(path, full, sizeof full);
    ember_err e;
    /* a transcript is the user's private data: 0600 */
    ember_file *ef = ember_file_create(path, EMBER_MODE_PRIVATE, &e);
    if (!ef) {
        snprintf(err, errcap, "%s", e.msg);
        return -1;
    }
    FILE *f = ember_file_stream(ef);
    tr_write_markdown(t, f, model);
    if (ember_file_commit(ef, &e)) {
        snprintf(err, errcap, "%s", e.msg);
        return -1;
    }
    return 0;
}
