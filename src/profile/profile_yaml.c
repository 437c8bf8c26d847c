/* libyaml events -> a small positioned node tree.  The event API (not the
   document loader) is used because the loader resolves aliases silently
   and we want to reject them with a position. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "profile_yaml.h"

int profile_seterr(profile_err *err, profile_errc code, const char *label, int line, int col,
                   const char *fmt, ...)
{
    if (!err) return -1;
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    err->code = code;
    err->line = line;
    err->col = col;
    if (!label) label = "<profile>";
    if (line > 0)
        snprintf(err->msg, sizeof err->msg, "%s:%d:%d: %s", label, line, col, what);
    else
        snprintf(err->msg, sizeof err->msg, "%s: %s", label, what);
    return -1;
}

void ynode_free(ynode *n)
{
    if (!n) return;
    for (int i = 0; i < n->n; i++) ynode_free(n->kids[i]);
    free(n->kids);
    free(n->str);
    free(n);
}

static int add_kid(ynode *parent, ynode *kid)
{
    if (parent->n == parent->cap) {
        int cap = parent->cap ? parent->cap * 2 : 8;
        ynode **k = realloc(parent->kids, (size_t)cap * sizeof *k);
        if (!k) return -1;
        parent->kids = k;
        parent->cap = cap;
    }
    parent->kids[parent->n++] = kid;
    return 0;
}

/* 1-based line/column of a byte offset, for reader errors that carry
   only an offset. */
static void offset_pos(const char *buf, size_t len, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (buf[i] == '\n') { l++; c = 1; }
        else if (((unsigned char)buf[i] & 0xC0) != 0x80) c++;
    }
    *line = l;
    *col = c;
}

/* A tab in the indentation of the line holding `off` (or of the lines
   just before it, since libyaml may only notice a bad indent later).
   Returns the offset of the tab or (size_t)-1. */
static size_t indent_tab_near(const char *buf, size_t len, size_t off)
{
    if (off >= len) off = len ? len - 1 : 0;
    if (len == 0) return (size_t)-1;
    if (buf[off] == '\t') return off;
    size_t start = off;
    while (start > 0 && buf[start - 1] != '\n') start--;
    for (int back = 0; back < 3; back++) {
        for (size_t i = start; i < len && (buf[i] == ' ' || buf[i] == '\t'); i++)
            if (buf[i] == '\t') return i;
        if (start == 0) break;
        start--;                         /* onto the previous '\n' */
        while (start > 0 && buf[start - 1] != '\n') start--;
    }
    return (size_t)-1;
}

static int yaml_error(const yaml_parser_t *ps, const char *label, const char *buf, size_t len,
                      profile_err *err)
{
    int line, col;
    size_t off;
    if (ps->error == YAML_READER_ERROR) {
        off = ps->problem_offset;
        offset_pos(buf, len, off, &line, &col);
        return profile_seterr(err, PROFILE_E_SYNTAX, label, line, col,
                              "%s (profiles must be UTF-8 text)",
                              ps->problem ? ps->problem : "unreadable input");
    }
    if (ps->error == YAML_MEMORY_ERROR)
        return profile_seterr(err, PROFILE_E_SYNTAX, label, 0, 0, "out of memory while parsing");
    off = ps->problem_mark.index;
    line = (int)ps->problem_mark.line + 1;
    col = (int)ps->problem_mark.column + 1;
    size_t tab = indent_tab_near(buf, len, off);
    if (tab != (size_t)-1) {
        offset_pos(buf, len, tab, &line, &col);
        return profile_seterr(err, PROFILE_E_TAB, label, line, col,
                              "tab character in indentation: YAML indents with spaces only");
    }
    if (ps->context)
        return profile_seterr(err, PROFILE_E_SYNTAX, label, line, col, "YAML syntax: %s (%s at %d:%d)",
                              ps->problem ? ps->problem : "error", ps->context,
                              (int)ps->context_mark.line + 1, (int)ps->context_mark.column + 1);
    return profile_seterr(err, PROFILE_E_SYNTAX, label, line, col, "YAML syntax: %s",
                          ps->problem ? ps->problem : "error");
}

static bool is_null_word(const char *s, size_t n)
{
    return n == 0 || (n == 1 && s[0] == '~') ||
           (n == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) || !memcmp(s, "NULL", 4)));
}

int ynode_parse(const char *label, const char *buf, size_t len, ynode **root, profile_err *err)
{
    *root = NULL;
    yaml_parser_t ps;
    if (!yaml_parser_initialize(&ps))
        return profile_seterr(err, PROFILE_E_SYNTAX, label, 0, 0, "cannot initialise libyaml");
    yaml_parser_set_input_string(&ps, (const unsigned char *)buf, len);
    yaml_parser_set_encoding(&ps, YAML_UTF8_ENCODING);

    ynode *stack[YNODE_MAX_DEPTH];
    int depth = 0, docs = 0, rc = 0;
    ynode *top = NULL;
    bool done = false;

    while (!done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&ps, &ev)) {
            rc = yaml_error(&ps, label, buf, len, err);
            break;
        }
        int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
        const unsigned char *anchor = NULL, *tag = NULL;
        ynode *node = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                rc = profile_seterr(err, PROFILE_E_MULTI_DOC, label, line, col,
                                    "a second YAML document: a profile file holds exactly one");
            break;
        case YAML_ALIAS_EVENT:
            rc = profile_seterr(err, PROFILE_E_ALIAS, label, line, col,
                                "alias '*%s': anchors and aliases are not supported in profiles, "
                                "write the value out", (const char *)ev.data.alias.anchor);
            break;
        case YAML_SCALAR_EVENT:
            anchor = ev.data.scalar.anchor;
            tag = ev.data.scalar.tag;
            node = calloc(1, sizeof *node);
            if (node) {
                node->kind = YN_SCALAR;
                node->len = ev.data.scalar.length;
                node->str = malloc(node->len + 1);
                if (node->str) {
                    memcpy(node->str, ev.data.scalar.value, node->len);
                    node->str[node->len] = 0;
                }
                node->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                node->null = node->plain && is_null_word(node->str ? node->str : "", node->len);
            }
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (ev.type == YAML_SEQUENCE_START_EVENT) {
                anchor = ev.data.sequence_start.anchor;
                tag = ev.data.sequence_start.tag;
            } else {
                anchor = ev.data.mapping_start.anchor;
                tag = ev.data.mapping_start.tag;
            }
            node = calloc(1, sizeof *node);
            if (node) node->kind = ev.type == YAML_SEQUENCE_START_EVENT ? YN_SEQ : YN_MAP;
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (depth > 0) depth--;
            break;
        default:
            break;
        }
        if (rc == 0 && anchor)
            rc = profile_seterr(err, PROFILE_E_ALIAS, label, line, col,
                                "anchor '&%s': anchors and aliases are not supported in profiles, "
                                "write the value out", (const char *)anchor);
        if (rc == 0 && tag)
            rc = profile_seterr(err, PROFILE_E_UNSUPPORTED, label, line, col,
                                "tag '%s': YAML tags are not supported in profiles", (const char *)tag);
        if (rc == 0 && (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
                        ev.type == YAML_MAPPING_START_EVENT)) {
            if (!node || (node->kind == YN_SCALAR && !node->str)) {
                rc = profile_seterr(err, PROFILE_E_SYNTAX, label, line, col, "out of memory");
            } else {
                node->line = line;
                node->col = col;
                if (depth > 0) {
                    if (add_kid(stack[depth - 1], node) < 0) {
                        rc = profile_seterr(err, PROFILE_E_SYNTAX, label, line, col, "out of memory");
                    } else {
                        ynode *n = node;
                        node = NULL;
                        if (n->kind != YN_SCALAR) {
                            if (depth == YNODE_MAX_DEPTH)
                                rc = profile_seterr(err, PROFILE_E_TOO_DEEP, label, line, col,
                                                    "nested more than %d levels deep", YNODE_MAX_DEPTH);
                            else
                                stack[depth++] = n;
                        }
                    }
                } else {
                    /* the document root: only one per document, and only
                       one document is allowed (checked above) */
                    top = node;
                    node = NULL;
                    if (top->kind != YN_SCALAR) stack[depth++] = top;
                }
            }
        }
        if (node) ynode_free(node);     /* not attached because of an error */
        yaml_event_delete(&ev);
        if (rc) break;
    }
    yaml_parser_delete(&ps);
    if (rc) {
        ynode_free(top);
        return rc;
    }
    if (!top || (top->kind == YN_SCALAR && top->null)) {
        ynode_free(top);
        return profile_seterr(err, PROFILE_E_EMPTY, label, 1, 1,
                              "the profile is empty: expected a mapping with at least 'rules:'");
    }
    *root = top;
    return 0;
}
