/* Internal to the profile loader: a small node tree built from libyaml
   events, keeping each node's position for error messages. */
#ifndef EMBER_PROFILE_YAML_H
#define EMBER_PROFILE_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include "profile.h"

#define YNODE_MAX_DEPTH 32

typedef enum { YN_SCALAR, YN_SEQ, YN_MAP } ynode_kind;

typedef struct ynode {
    ynode_kind kind;
    int line, col;               /* 1-based start of the node */
    /* scalars */
    char *str;
    size_t len;
    bool plain;                  /* unquoted: may be a number, bool or null */
    bool null;                   /* plain "", "~" or "null" */
    /* sequences: items; mappings: key, value, key, value ... */
    int n, cap;
    struct ynode **kids;
} ynode;

/* Parses one document.  Structural problems (syntax, tabs, empty input,
   several documents, anchors/aliases, tags, nesting) are reported here;
   the caller checks the schema. */
int ynode_parse(const char *label, const char *buf, size_t len, ynode **root, profile_err *err);
void ynode_free(ynode *n);

/* Fills err ("LABEL:LINE:COL: message") and returns -1. */
int profile_seterr(profile_err *err, profile_errc code, const char *label, int line, int col,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* profile_words.c */
#define MAX_STRATEGIES 8
/* Fills names[] (MAX_STRATEGIES) from the engine's table; returns the count. */
int profile_strategy_names(const char **names);
extern const char *const profile_when_names[3];     /* ember_pack_when order */
extern const char *const profile_prefill_names[2];  /* profile_prefill order */
/* " (did you mean 'x'?)" for the closest of words within a typo's reach, or "". */
const char *profile_dym(char *buf, size_t cap, const char *word, const char *const *words, int n);
/* "a, b, c" */
void profile_join_words(char *buf, size_t cap, const char *const *words, int n);

#endif
