/* The conversation as shown: user and assistant turns plus notices,
   wrapped to the window, scrolled from the bottom. */
#ifndef EMBER_UI_TRANSCRIPT_H
#define EMBER_UI_TRANSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "think.h"

typedef enum { TR_USER, TR_ASSISTANT, TR_SYSTEM, TR_NOTICE, TR_ERROR, TR_INFO } tr_role;

/* A finished reply's numbers, saved with it. */
typedef struct tr_stats {
    bool set;
    int prompt_tokens, generated_tokens;
    double ttft_ms, decode_tps;
} tr_stats;

typedef struct tr_entry {
    tr_role role;
    char *text;
    size_t len, cap;
    bool cancelled;        /* assistant reply stopped by the user */
    bool dropped;          /* no longer in the model's context */
    struct md_doc *md;     /* the reply's Markdown as last drawn (ui/draw.c), owned */
    size_t md_len;         /* len it was laid out from; a streaming reply grows past it */
    tr_stats stats;        /* assistant replies */
    int think_tokens;      /* tokens of the reply's <think> part (ui/think.h) */
    ui_think_scan think_scan;   /* how far the streaming reply was scanned for it */
} tr_entry;

typedef struct transcript {
    tr_entry *e;
    size_t n, cap;
    int scroll;            /* lines above the bottom */
} transcript;

void tr_init(transcript *t);
void tr_free(transcript *t);
/* Adds an entry; returns its index or -1. */
int tr_add(transcript *t, tr_role role, const char *text);
/* Appends text to entry i. */
void tr_append(transcript *t, int i, const char *text, size_t n);
void tr_clear(transcript *t);
/* Removes entry i. */
void tr_remove(transcript *t, int i);
/* The conversation as Markdown (user/assistant turns, system prompt):
   what /save writes and /copy all copies. */
void tr_write_markdown(const transcript *t, FILE *f, const char *model);
/* Writes Markdown (user/assistant turns, system prompt) to path (a leading
   "~/" is the home directory) with the safe writer, mode 0600; 0, or -1
   with err ("cannot write PATH: REASON"). */
int tr_save_markdown(const transcript *t, const char *path, const char *model,
                     char *err, size_t errcap);

/* Label shown before an entry ("you", "assistant", ...). */
const char *tr_label(tr_role r);

#endif
