/* Finding a reply's thinking (think.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "think.h"

static const char OPEN[] = "<think>", CLOSE[] = "</think>";

static bool blank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

void ui_think_split(const char *text, size_t len, ui_think *out)
{
    *out = (ui_think){false, false, 0};
    size_t i = 0;
    while (i < len && blank(text[i])) i++;
    size_t left = len - i, ol = sizeof OPEN - 1;
    if (left == 0) return;
    /* a reply streaming in may hold only the start of the tag so far:
       folded already, so the tag never flashes on screen */
    if (memcmp(text + i, OPEN, left < ol ? left : ol)) return;
    out->has = true;
    if (left <= ol) {
        out->open = true;
        out->body = len;
        return;
    }
    const char *s = text + i + ol, *end = text + len;
    const char *c = NULL;
    for (const char *p = s; p + (sizeof CLOSE - 1) <= end; p++)
        if (!memcmp(p, CLOSE, sizeof CLOSE - 1)) {
            c = p;
            break;
        }
    if (!c) {
        out->open = true;
        out->body = len;
        return;
    }
    size_t b = (size_t)(c - text) + sizeof CLOSE - 1;
    while (b < len && blank(text[b])) b++;
    out->body = b;
}

void ui_think_label(int tokens, bool ascii, char *out, size_t cap)
{
    snprintf(out, cap, "thinking%s (%d token%s)", ascii ? "..." : "\xe2\x80\xa6", tokens, tokens == 1 ? "" : "s");
}

const char *ui_think_said(bool show)
{
    return show ? "thinking unfolded (/think hide folds it)" : "thinking folded (/think show unfolds it)";
}

/* The scan's phases, in the order a reply goes through them. */
enum { SCAN_LEAD, SCAN_TAG, SCAN_OPEN, SCAN_CLOSED, SCAN_BODY, SCAN_NONE };

/* Brings s->th to ui_think_split(text, len) from where the last call left
   it: each phase resumes at s->at, so no byte is looked at twice except
   the last few a </think> cut by a token boundary may start in. */
static void scan(ui_think_scan *s, const char *text, size_t len)
{
    size_t ol = sizeof OPEN - 1, cl = sizeof CLOSE - 1;
    switch (s->phase) {
    case SCAN_LEAD:
        while (s->at < len && blank(text[s->at])) s->at++;
        if (s->at == len) return;           /* blanks alone: nothing yet */
        s->phase = SCAN_TAG;
        /* fall through */
    case SCAN_TAG: {
        size_t left = len - s->at;
        if (memcmp(text + s->at, OPEN, left < ol ? left : ol)) {
            s->phase = SCAN_NONE;
            s->th = (ui_think){false, false, 0};
            return;
        }
        s->th = (ui_think){true, true, len};
        if (left <= ol) return;
        s->at += ol;
        s->phase = SCAN_OPEN;
    }
        /* fall through */
    case SCAN_OPEN: {
        size_t p = s->at;
        for (; p + cl <= len; p++)
            if (text[p] == '<' && !memcmp(text + p, CLOSE, cl)) break;
        if (p + cl > len) {
            s->at = p;                      /* a </think> may yet start here */
            s->th.body = len;
            return;
        }
        s->at = p + cl;
        s->phase = SCAN_CLOSED;
        s->th.open = false;
    }
        /* fall through */
    case SCAN_CLOSED:
        while (s->at < len && blank(text[s->at])) s->at++;
        s->th.body = s->at;
        if (s->at < len) s->phase = SCAN_BODY;
        return;
    default: return;                        /* SCAN_BODY, SCAN_NONE: settled */
    }
}

bool ui_think_grow(ui_think_scan *s, const char *text, size_t len)
{
    bool was_closed = s->th.has && !s->th.open;
    scan(s, text, len);
    return s->th.has && !was_closed;
}

bool ui_think_feed(ui_think_stream *s, const char *text, size_t len, bool model, size_t *from)
{
    if (ui_think_grow(&s->scan, text, len) && model) s->tokens++;
    ui_think th = s->scan.th;
    *from = len;
    if (th.has && th.open) return false;      /* still thinking (or maybe the tag): hold it */
    bool mark = false;
    if (th.has) {
        mark = !s->marked;
        s->marked = true;
        if (s->shown < th.body) s->shown = th.body;
    }
    if (s->shown < len) *from = s->shown;
    s->shown = len;
    return mark;
}

bool ui_think_end(ui_think_stream *s, const char *text, size_t len)
{
    scan(&s->scan, text, len);
    bool mark = s->scan.th.has && !s->marked;
    s->marked = true;
    return mark;
}
