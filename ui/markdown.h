/* Replies' Markdown as styled display lines for a terminal of a given
   width.  md4c parses; this module lays out: wrapped paragraphs, list
   bullets, quote bars, aligned tables, and fenced code blocks kept byte
   for byte (never re-wrapped: a line wider than the window is cut with
   a marker).  No curses here; ui/draw.c maps styles to attributes. */
#ifndef EMBER_UI_MARKDOWN_H
#define EMBER_UI_MARKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "highlight.h"

typedef enum {
    MDS_TEXT,
    MDS_CODE,            /* `inline code` */
    MDS_H1, MDS_H2, MDS_H3,   /* headings (H3 also for 4-6), marks included */
    MDS_BULLET,          /* list marks: "• ", "3. ", "[x] " */
    MDS_QUOTE,           /* the quote bar */
    MDS_LINK,            /* a link's text */
    MDS_URL,             /* its address, shown after the text */
    MDS_BORDER,          /* table borders and horizontal rules */
    MDS_BLOCK_LABEL,     /* "[code 1: python]" above a code block */
    MDS_CUT,             /* the marker on a code line cut at the width */
    MDS_BLOCK,           /* code-block bytes; the next ones follow hl_class's order */
    MDS_BLOCK_KEYWORD, MDS_BLOCK_TYPE, MDS_BLOCK_STRING, MDS_BLOCK_COMMENT, MDS_BLOCK_NUMBER,
    MDS_BLOCK_ADDED, MDS_BLOCK_REMOVED, MDS_BLOCK_META,
    MDS_N_STYLES
} md_style;

enum { MDF_BOLD = 1, MDF_ITALIC = 2, MDF_STRIKE = 4, MDF_QUOTED = 8, MDF_HEAD = 16 };

typedef struct md_span {
    size_t off;          /* into md_doc.text */
    uint32_t len;
    uint8_t style;       /* md_style */
    uint8_t flags;       /* MDF_* */
} md_span;

typedef struct md_line {
    size_t span0;        /* first span in md_doc.spans */
    uint32_t nspan;
    int width;           /* columns */
    int block;           /* code block number (0-based) for its lines, else -1 */
} md_line;

typedef struct md_block {
    char *text;          /* the block's exact bytes (tabs and all), owned */
    size_t len;
    char lang[32];       /* the fence's first info word, "" if none */
} md_block;

typedef struct md_doc {
    char *text;          /* bytes of every span, one arena */
    size_t tlen, tcap;
    md_span *spans;
    size_t nspans, spcap;
    md_line *lines;
    int n, cap;
    md_block *blocks;
    int nblocks, bcap;
    int width;           /* what it was laid out for */
} md_doc;

typedef struct md_opts {
    int width;           /* columns available, >= 1 */
    bool ascii;          /* '*', '|', '-', '+' instead of box drawing and bullets */
    bool plain;          /* no colours: inline code keeps its backticks */
} md_opts;

/* Lays out n bytes of Markdown (any bytes: invalid UTF-8 and unfinished
   constructs are shown, never rejected).  NULL only when out of memory. */
md_doc *md_render(const char *s, size_t n, const md_opts *o);
void md_free(md_doc *d);

/* The fenced and indented code blocks of a text, numbered as on the
   screen (block i is "[code i+1]"), each with its exact bytes.  *out is
   malloc'd, freed with md_blocks_free.  Returns the count, -1 when out
   of memory. */
int md_code_blocks(const char *s, size_t n, md_block **out);
void md_blocks_free(md_block *b, int n);

/* A line's text (all spans) into buf, NUL-terminated; returns its length. */
size_t md_line_text(const md_doc *d, int i, char *buf, size_t cap);

#endif
