/* Markdown layout: each construct's lines and styles, tables aligned,
   code blocks byte-exact, streaming prefixes, hostile input.  Also the
   OSC 52 sequence /copy sends. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "markdown.h"
#include "osc52.h"
#include "tap.h"
#include "wrap.h"

static char lb[1 << 16];

static md_doc *R(const char *s, int width)
{
    md_opts o = {width, false, false};
    return md_render(s, strlen(s), &o);
}

static const char *L(const md_doc *d, int i)
{
    md_line_text(d, i, lb, sizeof lb);
    return lb;
}

/* The first line containing needle, or -1. */
static int find(const md_doc *d, const char *needle)
{
    for (int i = 0; i < d->n; i++)
        if (strstr(L(d, i), needle)) return i;
    return -1;
}

/* Style and flags of the span holding the first byte of needle on line i. */
static int style_of(const md_doc *d, int i, const char *needle, int *flags)
{
    if (i < 0) return -1;
    const md_line *l = &d->lines[i];
    size_t at = 0;
    L(d, i);
    const char *p = strstr(lb, needle);
    if (!p) return -1;
    size_t want = (size_t)(p - lb);
    for (uint32_t k = 0; k < l->nspan; k++) {
        const md_span *s = &d->spans[l->span0 + k];
        if (want >= at && want < at + s->len) {
            if (flags) *flags = s->flags;
            return s->style;
        }
        at += s->len;
    }
    return -1;
}

static int max_width(const md_doc *d)
{
    int m = 0;
    for (int i = 0; i < d->n; i++) {
        L(d, i);
        int w = ui_str_width(lb, strlen(lb));
        if (w != d->lines[i].width) return -1;     /* the recorded width must be right */
        if (w > m) m = w;
    }
    return m;
}

static void test_inline(void)
{
    int f = 0;
    md_doc *d = R("Some **bold**, *it*, ~~gone~~, `x = 1` and [docs](https://ex.am/p).", 200);
    tap_ok(d && d->n == 1, "one paragraph, one line");
    tap_ok(!strcmp(L(d, 0), "Some bold, it, gone, x = 1 and docs (https://ex.am/p)."),
           "marks removed, the link's address after its text: '%s'", L(d, 0));
    tap_ok(style_of(d, 0, "bold", &f) == MDS_TEXT && f == MDF_BOLD, "bold");
    tap_ok(style_of(d, 0, "it,", &f) == MDS_TEXT && f == MDF_ITALIC, "italic");
    tap_ok(style_of(d, 0, "gone", &f) == MDS_TEXT && f == MDF_STRIKE, "strikethrough");
    tap_ok(style_of(d, 0, "x = 1", NULL) == MDS_CODE, "inline code");
    tap_ok(style_of(d, 0, "docs", NULL) == MDS_LINK && style_of(d, 0, "https", NULL) == MDS_URL,
           "link text and URL styles");
    md_free(d);
    d = R("see <https://a.b/c> and www.example.org", 200);
    tap_ok(d && find(d, "www.example.org") == 0 && style_of(d, 0, "https", NULL) == MDS_LINK, "autolinks are links");
    tap_ok(d && strstr(L(d, 0), "https://a.b/c (") == NULL && strstr(L(d, 0), "(http") == NULL, "an autolink's address is not repeated: '%s'", L(d, 0));
    md_free(d);
    md_opts o = {80, false, true};
    d = md_render("a `b` c", 7, &o);
    tap_ok(d && !strcmp(L(d, 0), "a `b` c"), "without colour inline code keeps its backticks");
    md_free(d);
    d = R("a &amp; b &lt; &#955; &bogus;", 80);
    tap_ok(d && !strcmp(L(d, 0), "a & b < \xce\xbb &bogus;"), "entities decoded, unknown ones literal: '%s'", L(d, 0));
    md_free(d);
}

static void test_blocks(void)
{
    md_doc *d = R("# One\n\n## Two\n\n#### Four\n\npara", 80);
    tap_ok(d && !strcmp(L(d, 0), "# One") && style_of(d, 0, "One", NULL) == MDS_H1, "H1 keeps its mark, styled");
    tap_ok(find(d, "## Two") == 2 && style_of(d, 2, "Two", NULL) == MDS_H2, "H2 after a blank line");
    tap_ok(style_of(d, find(d, "Four"), "Four", NULL) == MDS_H3, "H4 uses the H3 style");
    md_free(d);

    d = R("- one\n- two\n  - inner\n- three\n\n3. c\n4. d\n\n- [x] done\n- [ ] todo", 80);
    tap_ok(d && !strcmp(L(d, 0), "\xe2\x80\xa2 one") && style_of(d, 0, "\xe2\x80\xa2", NULL) == MDS_BULLET,
           "bullet list");
    tap_ok(find(d, "inner") == 2 && !strcmp(L(d, 2), "  \xe2\x80\xa2 inner"), "nested item indented under its parent");
    tap_ok(find(d, "three") == 3, "a tight list has no blank lines");
    tap_ok(find(d, "3. c") > 0 && find(d, "4. d") == find(d, "3. c") + 1, "ordered list keeps its start number");
    tap_ok(find(d, "[x] done") > 0 && find(d, "[ ] todo") > 0, "task list marks");
    md_free(d);

    d = R("- a long item that wraps over lines", 12);
    tap_ok(d && d->n >= 3 && !strncmp(L(d, 0), "\xe2\x80\xa2 ", 4) && !strncmp(L(d, 1), "  ", 2),
           "wrapped item lines hang under the text, not the bullet");
    tap_ok(max_width(d) <= 12, "and stay within the width");
    md_free(d);

    d = R("> quoted *text*\n> > deeper", 80);
    tap_ok(d && !strcmp(L(d, 0), "\xe2\x94\x82 quoted text") && style_of(d, 0, "\xe2\x94\x82", NULL) == MDS_QUOTE,
           "quote bar: '%s'", L(d, 0));
    int f = 0;
    style_of(d, 0, "quoted", &f);
    tap_ok(f & MDF_QUOTED, "quoted text is flagged");
    tap_ok(find(d, "\xe2\x94\x82 \xe2\x94\x82 deeper") >= 0, "nested quote has two bars");
    md_free(d);

    md_opts o = {80, true, false};
    d = md_render("- a\n\n> b\n\n---\n", 14, &o);
    tap_ok(d && !strcmp(L(d, 0), "* a") && find(d, "| b") >= 0 && find(d, "----------") >= 0,
           "ASCII: '*' bullets, '|' quote bar, '-' rule");
    md_free(d);
}

static void test_table(void)
{
    md_doc *d = R("| Name | Size | Mid |\n|:--|--:|:-:|\n| a | 1 | x |\n| longer | 12345 | yy |\n", 80);
    int h = find(d, "Name");
    tap_ok(d && h == 1 && d->n == 6, "table: top, header, rule, 2 rows, bottom (%d lines)", d ? d->n : 0);
    tap_ok(!strcmp(L(d, 0), "\xe2\x94\x8c\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
                             "\xe2\x94\x80\xe2\x94\x80\xe2\x94\xac" "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
                             "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\xac\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
                             "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x90"), "top border sized to the columns");
    tap_ok(!strcmp(L(d, 1), "\xe2\x94\x82 Name   \xe2\x94\x82  Size \xe2\x94\x82 Mid \xe2\x94\x82"), "header: '%s'", L(d, 1));
    tap_ok(!strcmp(L(d, 3), "\xe2\x94\x82 a      \xe2\x94\x82     1 \xe2\x94\x82  x  \xe2\x94\x82"),
           "left, right and centre alignment: '%s'", L(d, 3));
    tap_ok(!strcmp(L(d, 4), "\xe2\x94\x82 longer \xe2\x94\x82 12345 \xe2\x94\x82 yy  \xe2\x94\x82"), "widest cells set the widths");
    int w0 = d->lines[0].width, same = 1;
    for (int i = 1; i < d->n; i++) same &= d->lines[i].width == w0;
    tap_ok(same, "every table line has the same width (%d)", w0);
    int f = 0;
    tap_ok(style_of(d, 1, "Name", &f) == MDS_TEXT && (f & MDF_HEAD) && style_of(d, 0, "\xe2\x94\x8c", NULL) == MDS_BORDER,
           "header cells flagged, borders styled");
    md_free(d);
    d = R("| a | b |\n|---|---|\n| " "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx | yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy |\n", 30);
    tap_ok(d && max_width(d) <= 30 && max_width(d) >= 28, "a table too wide is narrowed to the width (%d)", d ? max_width(d) : -1);
    /* what does not fit is marked, as on a cut code line, not dropped unseen */
    int row = d ? find(d, "xxx") : -1;
    tap_ok(row >= 0 && strstr(L(d, row), "x\xe2\x86\x92 \xe2\x94\x82") && strstr(L(d, row), "y\xe2\x86\x92 \xe2\x94\x82") &&
               style_of(d, row, "\xe2\x86\x92", NULL) == MDS_CUT,
           "a cell cut to the width ends in the cut marker: '%s'", row >= 0 ? L(d, row) : "");
    row = d ? find(d, " a ") : -1;
    tap_ok(row >= 0 && !strstr(L(d, row), "\xe2\x86\x92"), "a cell that fits has no marker: '%s'", row >= 0 ? L(d, row) : "");
    md_free(d);
    d = R("| a | b |\n|---|---|\n| 1 |", 30);
    tap_ok(d && find(d, "\xe2\x94\x82 1 \xe2\x94\x82   \xe2\x94\x82") >= 0, "a short row gets empty cells");
    md_free(d);
}

static void test_code(void)
{
    const char *src = "Intro\n\n```c\nint main(void)\n{\n\treturn 0;\t/* tab */\n}\n```\n\n```\nplain\n```\n";
    md_doc *d = R(src, 80);
    tap_ok(d && d->nblocks == 2, "two code blocks listed");
    tap_ok(d->nblocks == 2 && !strcmp(d->blocks[0].text, "int main(void)\n{\n\treturn 0;\t/* tab */\n}\n") &&
           !strcmp(d->blocks[0].lang, "c"), "block 1 keeps its exact bytes, tabs included");
    tap_ok(d->nblocks == 2 && !strcmp(d->blocks[1].text, "plain\n") && !d->blocks[1].lang[0], "block 2, no language");
    tap_ok(find(d, "```") < 0, "fences are not shown");
    int lab = find(d, "[code 1: c]");
    tap_ok(lab > 0 && style_of(d, lab, "[code", NULL) == MDS_BLOCK_LABEL && d->lines[lab].block == 0,
           "a numbered label above the block");
    int r = find(d, "return");
    tap_ok(r > 0 && !strcmp(L(d, r), "    return 0;   /* tab */"), "tabs shown as spaces to 4-column stops: '%s'", L(d, r));
    {
        /* a reply's own tabs, outside code, stop from its text's start as
           the transcript's other lines do; under a quote, after the mark */
        md_doc *t = R("a\tbc\td", 80);
        tap_ok(t && t->n == 1 && !strcmp(L(t, 0), "a   bc  d") && max_width(t) == 9,
               "a paragraph's tabs as blanks to the stops: '%s'", t ? L(t, 0) : "");
        md_free(t);
        t = R("> a\tbc\td", 80);
        int q = t ? find(t, "bc") : -1;
        tap_ok(q >= 0 && strstr(L(t, q), "a   bc  d") && max_width(t) >= 0, "under a quote too: '%s'", q >= 0 ? L(t, q) : "");
        md_free(t);
    }
    tap_ok(d->lines[r].block == 0 && style_of(d, r, "return", NULL) == MDS_BLOCK_KEYWORD &&
           style_of(d, r, "/* tab", NULL) == MDS_BLOCK_COMMENT && style_of(d, r, "0;", NULL) == MDS_BLOCK_NUMBER,
           "code lines are tagged with the block and highlighted");
    int p = find(d, "plain");
    tap_ok(p > 0 && d->lines[p].block == 1 && style_of(d, p, "plain", NULL) == MDS_BLOCK, "unknown language: plain block style");
    md_free(d);

    /* never wrapped: cut at the width with a marker */
    d = R("```\n0123456789abcdefghij\nshort\n```", 10);
    int c = find(d, "012345678");
    tap_ok(c > 0 && !strcmp(L(d, c), "012345678\xe2\x86\x92") && d->lines[c].width == 10 &&
           style_of(d, c, "\xe2\x86\x92", NULL) == MDS_CUT, "a long code line is cut with a marker: '%s'", L(d, c));
    tap_ok(find(d, "abcdefghij") < 0 && find(d, "short") == c + 1, "and not wrapped onto the next line");
    tap_ok(!strcmp(d->blocks[0].text, "0123456789abcdefghij\nshort\n"), "the block keeps the whole line for copying");
    md_free(d);
    d = R("```\n0123456789\n```", 10);
    tap_ok(d && find(d, "0123456789") > 0 && find(d, "\xe2\x86\x92") < 0, "a line exactly the width is not cut");
    md_free(d);

    md_block *b = NULL;
    int nb = md_code_blocks(src, strlen(src), &b);
    tap_ok(nb == 2 && !strcmp(b[0].text, "int main(void)\n{\n\treturn 0;\t/* tab */\n}\n") &&
           !strcmp(b[1].text, "plain\n") && !strcmp(b[0].lang, "c"), "md_code_blocks lists them without a layout");
    md_blocks_free(b, nb);
    nb = md_code_blocks("no code, just `inline`", 22, &b);
    tap_ok(nb == 0, "no blocks in text without fences");
    md_blocks_free(b, nb);

    /* indentation inside containers comes back from the source */
    d = R("> ```sh\n> \techo hi\n> ```\n\n- item\n\n  ```\n  \tx\n  ```\n", 80);
    tap_ok(d && d->nblocks == 2 && !strcmp(d->blocks[0].text, "\techo hi\n") && !strcmp(d->blocks[1].text, "\tx\n"),
           "a tab in a block inside a quote or list is kept");
    md_free(d);
}

static void test_stream(void)
{
    md_doc *d = R("Here:\n\n```python\ndef f():\n    return 1", 80);
    tap_ok(d && d->nblocks == 1 && find(d, "def f") > 0 && d->lines[find(d, "def f")].block == 0,
           "an unclosed fence renders as a code block so far");
    tap_ok(d && !strcmp(d->blocks[0].text, "def f():\n    return 1\n"), "with the bytes so far (md4c ends the last line)");
    md_free(d);
    d = R("this is **bold and `code", 80);
    tap_ok(d && !strcmp(L(d, 0), "this is **bold and `code"), "unclosed emphasis and code show literally");
    md_free(d);
    d = R("this is **bold**", 80);
    tap_ok(d && !strcmp(L(d, 0), "this is bold"), "and settle when closed");
    md_free(d);
    d = R("| a | b |\n", 80);
    tap_ok(d && !strcmp(L(d, 0), "| a | b |"), "a table's first row alone is text until the delimiter row");
    md_free(d);
    /* every prefix of a document renders */
    const char *doc = "# T\n\n- a *b*\n\n| x | y |\n|---|--:|\n| 1 | 2 |\n\n```js\nlet s = `t`;\n```\n> q [l](u)";
    int ok = 1;
    for (size_t k = 0; k <= strlen(doc); k++) {
        md_opts o = {20, false, false};
        md_doc *p = md_render(doc, k, &o);
        if (!p || max_width(p) > 20) ok = 0, tap_diag("prefix %zu fails", k);
        md_free(p);
    }
    tap_ok(ok, "each of the %zu prefixes renders within the width", strlen(doc) + 1);
}

static void test_hostile(void)
{
    size_t n = 1 << 20;
    char *s = malloc(n + 1);
    for (size_t i = 0; i < n; i++) s[i] = "ab *c* `d` [e](f)\n|"[i % 20];
    s[n] = 0;
    md_opts o = {80, false, false};
    md_doc *d = md_render(s, n, &o);
    tap_ok(d && d->n > 1000 && max_width(d) <= 80, "1 MiB of mixed Markdown (%d lines)", d ? d->n : 0);
    md_free(d);
    for (size_t i = 0; i < n; i++) s[i] = "- > "[i % 4];
    d = md_render(s, n, &o);
    tap_ok(d != NULL && max_width(d) <= 80, "deeply nested lists and quotes keep to the width");
    md_free(d);
    memset(s, '>', n);
    d = md_render(s, 20000, &o);
    tap_ok(d != NULL, "20000 nested quotes");
    md_free(d);
    for (size_t i = 0; i < n; i++) s[i] = (char)(0x80 + (i * 7919) % 128);
    d = md_render(s, n, &o);
    tap_ok(d && max_width(d) <= 80, "1 MiB of invalid UTF-8");
    md_free(d);
    memcpy(s, "```\n", 4);
    for (size_t i = 4; i < n; i++) s[i] = (char)(i * 31 % 256);
    d = md_render(s, n, &o);
    tap_ok(d && d->nblocks == 1 && max_width(d) <= 80, "a 1 MiB binary code block");
    md_free(d);
    d = md_render("", 0, &o);
    tap_ok(d && d->n == 0, "empty text: no lines");
    md_free(d);
    o.width = 1;
    d = md_render("- > | a | b |\n|---|---|\n```\nx\n```", 33, &o);
    tap_ok(d != NULL, "width 1");
    md_free(d);
    free(s);
}

static void test_osc52(void)
{
    char b[64];
    tap_ok(ui_base64("", 0, b, sizeof b) == 0 && !strcmp(b, ""), "base64 of nothing");
    tap_ok(ui_base64("f", 1, b, sizeof b) == 4 && !strcmp(b, "Zg=="), "base64 'f'");
    tap_ok(ui_base64("fo", 2, b, sizeof b) == 4 && !strcmp(b, "Zm8="), "base64 'fo'");
    tap_ok(ui_base64("foobar", 6, b, sizeof b) == 8 && !strcmp(b, "Zm9vYmFy"), "base64 'foobar'");
    tap_ok(ui_base64("\xff\x00\xfe", 3, b, sizeof b) == 4 && !strcmp(b, "/wD+"), "base64 of binary bytes");
    tap_ok(ui_base64("foobar", 6, b, 8) == 8, "too small: the length it needs");
    size_t len;
    char *q = ui_osc52("int x;\n", 7, &len);
    tap_ok(q && !strcmp(q, "\033]52;c;aW50IHg7Cg==\a") && len == strlen(q), "OSC 52 sequence: ESC ] 52 ; c ; b64 BEL");
    free(q);
}

int main(void)
{
    test_inline();
    test_blocks();
    test_table();
    test_code();
    test_stream();
    test_hostile();
    test_osc52();
    return tap_done();
}
