/* The sampling and generation options: one record each (the command-line
   spelling, the profile key, the /set key, type, range, default, help and
   where the value lands), used by `ember chat`, `ember run`, the profile
   reader and /set, so each option is defined once and checked the same way
   everywhere. */
#ifndef EMBER_OPTIONS_H
#define EMBER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "numarg.h"
#include "ember.h"

typedef enum {
    OPT_TEMP, OPT_TOP_K, OPT_TOP_P, OPT_MIN_P, OPT_REPEAT_PENALTY, OPT_REPEAT_LAST_N, OPT_SEED,
    OPT_N_PREDICT, OPT_CTX, OPT_THREADS, OPT_KV_CACHE, OPT_PACK_CACHE, OPT_REASONING,
    OPT_COUNT
} gen_opt_id;

#define GEN_OPT_BIT(id) (1u << (id))
#define GEN_OPT_ALL ((1u << OPT_COUNT) - 1)

/* GEN_WORD: an int given by name, the names being the engine's (names()) */
typedef enum { GEN_INT, GEN_FLOAT, GEN_U64, GEN_WORD } gen_opt_type;
/* Where a profile holds the key: top level or under `sampling:`. */
typedef enum { GEN_PROFILE_NONE, GEN_PROFILE_TOP, GEN_PROFILE_SAMPLING } gen_opt_section;

/* The values one layer (defaults, a profile, the command line, /set) gives. */
typedef struct gen_opts {
    ember_sampler_opts samp;
    int n_predict;       /* per reply; -1: until the model stops or the context is full */
    int n_ctx;           /* context tokens; 0: the command's own default */
    int threads;         /* 0: one per core */
    int kv_cache;        /* ember_kv_type */
    int pack_cache;      /* 0 off, 1 on: ember_plan_opts.pack_cache */
    int reasoning;       /* GEN_REASONING_*: the template's enable_thinking */
    uint32_t set;        /* GEN_OPT_BIT(id): this layer gives option id */
} gen_opts;

/* The words of --reasoning, by value: auto leaves enable_thinking undefined,
   so the template's own default holds. */
enum { GEN_REASONING_AUTO, GEN_REASONING_ON, GEN_REASONING_OFF };
/* As the worker takes it (ember_worker_opts.think): -1, 1, 0. */
int gen_opts_reasoning_mode(const gen_opts *g);

typedef struct gen_opt {
    const char *cli;          /* "--temp" (getopt's long name is cli + 2) */
    char short_opt;           /* 'n', or 0 */
    const char *metavar;      /* "T" in "--temp T" */
    gen_opt_section section;
    const char *profile_key;  /* NULL: not in profiles */
    const char *set_key;      /* NULL: not changeable with /set */
    gen_opt_type type;
    numarg_range range;
    double dflt;              /* the engine's and the chat's default */
    size_t offset;            /* in gen_opts */
    const char *help;
    const char *(*names)(int);   /* GEN_WORD: value -> name, NULL past the last */
} gen_opt;

extern const gen_opt gen_opt_table[OPT_COUNT];

/* Every field at the table's default, nothing set. */
void gen_opts_default(gen_opts *g);

/* Parses text for option id into g (and marks it set).  On failure, msg
   says "expected an integer in A..B, got 'x'" and g is unchanged. */
numarg_status gen_opt_parse(int id, const char *text, gen_opts *g, char *msg, size_t cap);

/* Copies into dst every option src sets (and marks it set in dst). */
void gen_opts_overlay(gen_opts *dst, const gen_opts *src);

/* Look-ups; -1 when there is no such option. */
int gen_opt_by_set_key(const char *key, size_t len);
int gen_opt_by_profile_key(gen_opt_section section, const char *key);

/* The current value as text ("0.7", "40", "-1"). */
void gen_opt_format(int id, const gen_opts *g, char *buf, size_t cap);
/* "temp 0.7, top_k 40, ..." for the options /set can change. */
void gen_opts_set_summary(const gen_opts *g, char *buf, size_t cap);
/* The /set keys separated by ", ", for messages. */
void gen_opts_set_keys(char *buf, size_t cap);

/* ---- command lines ---------------------------------------------------------- */

/* getopt_long values of the table's options: GEN_OPT_GETOPT + id. */
#define GEN_OPT_GETOPT 0x1000

struct option;
/* Appends the long options of the ids in mask to lo (which has room for
   n_used + OPT_COUNT + 1 entries) and keeps it zero-terminated; appends
   their short letters (with ':') to shorts.  Returns the new count. */
int gen_opts_getopt(struct option *lo, int n_used, uint32_t mask, char *shorts, size_t shorts_cap);
/* For a getopt_long result c: when it is one of the table's options, parses
   optarg into g, printing "PROG: OPT: expected ..." on failure.  Returns 1
   handled, 0 not a table option, -1 refused. */
int gen_opts_getopt_handle(int c, const char *prog, int argc, char **argv, const char *optarg,
                           gen_opts *g);
/* The option as the user typed it ("-n", "--n-predict", "--ctx" from
   "--ctx=5"), found by where optarg points into argv. */
const char *gen_opts_typed(int argc, char **argv, const char *optarg, char *buf, size_t cap);

/* Help lines of the options in mask, each with its range and default:
   the default from dflt, or the text in dflt_text[id] when non-NULL. */
void gen_opts_usage(FILE *out, uint32_t mask, const gen_opts *dflt, const char *const *dflt_text);

#endif
