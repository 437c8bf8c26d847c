/* YAML profiles: how each model lives in memory (ember-profile(5)).
   Loading is strict: every problem is reported with a class, the
   file:line:column and a message a person can act on. */
#ifndef EMBER_PROFILE_H
#define EMBER_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember.h"
#include "options.h"

#define PROFILE_MAX_BYTES (1u << 20)   /* larger files are refused */
#define PROFILE_MAX_RULES 64

/* Error classes; tests assert on these, so only ever append. */
typedef enum {
    PROFILE_OK = 0,
    PROFILE_E_IO,            /* cannot open / read the file */
    PROFILE_E_TOO_LARGE,     /* over PROFILE_MAX_BYTES */
    PROFILE_E_EMPTY,         /* no document, or a null document */
    PROFILE_E_SYNTAX,        /* libyaml scanner / parser error */
    PROFILE_E_TAB,           /* a tab where YAML needs spaces */
    PROFILE_E_MULTI_DOC,     /* more than one document */
    PROFILE_E_ALIAS,         /* anchors and aliases are rejected */
    PROFILE_E_NOT_MAPPING,   /* top level is not a mapping */
    PROFILE_E_UNKNOWN_KEY,
    PROFILE_E_DUPLICATE_KEY,
    PROFILE_E_TYPE,          /* wrong YAML type for a key */
    PROFILE_E_VALUE,         /* right type, impossible value */
    PROFILE_E_ENUM,          /* not one of the allowed words */
    PROFILE_E_MISSING,       /* a required key is absent */
    PROFILE_E_UNSUPPORTED,   /* valid YAML but not something ember can do */
    PROFILE_E_PACK_NOT_PACKED, /* pack: on a rule whose strategy is not packed */
    PROFILE_E_TOO_DEEP,      /* nesting beyond any real profile */
    PROFILE_E_NO_MATCH,      /* no rule fits the model */
    PROFILE_E_NOT_FOUND,     /* profile_find: no such profile */
    PROFILE_E_MODEL,         /* the model header could not be read */
    PROFILE_E_COUNT
} profile_errc;

const char *profile_errc_name(profile_errc c);   /* "unknown-key", ... */

typedef struct profile_err {
    profile_errc code;
    int line, col;           /* 1-based; 0 when the error has no position */
    char msg[512];           /* "FILE:LINE:COL: what is wrong" */
} profile_err;

typedef enum { PROFILE_PREFILL_GENERIC = 0, PROFILE_PREFILL_PACKED = 1 } profile_prefill;

typedef struct profile_rule {
    /* match; NULL / 0 means "any" */
    char *arch, *dtype, *name_glob, *file_glob, *cpu;
    uint64_t min_params, max_params;   /* max 0 = no bound */
    bool has_min, has_max;
    /* action */
    ember_strategy strategy;
    bool has_pack;
    unsigned projections;    /* EMBER_PROJ_* */
    ember_pack_when when;
    bool evict_source, reevict_after_prefill;
    profile_prefill prefill;
    int line;                /* where the rule starts, for messages */
} profile_rule;

/* Session defaults.  The has_* flags say what the file set; everything
   else stays at the engine's defaults. */
typedef struct profile {
    char *name;
    char *description;
    char *source;            /* path or the name given to profile_load_mem */
    char *system;            /* system prompt, NULL when not set */
    int n_rules;
    profile_rule *rules;
    bool allow_fallback;
    bool has_allow_fallback;
    /* threads, context and the sampling: section's keys, read through the
       option table (options.h); vals.set says which the file gives */
    gen_opts vals;
} profile;

/* `name` labels messages (a path, or e.g. "auto.yaml") and supplies the
   profile name when the document has no `name:` key. */
profile *profile_load_mem(const char *name, const char *buf, size_t len, profile_err *err);
profile *profile_load_file(const char *path, profile_err *err);
void profile_free(profile *p);

/* ---- matching ----------------------------------------------------------- */

/* What a rule can test about a model.  Filled from a GGUF header by
   profile_target_from_file(), or from an opened model's info. */
typedef struct profile_target {
    char arch[32];
    char name[128];          /* general.name */
    char dtype[16];          /* dominant weight dtype, "Q8_0" */
    char file_type[16];      /* general.file_type as a name ("Q4_K_M"), "" if unknown */
    uint64_t n_params;
    char file[256];          /* basename of the model file, "" if unknown */
    char cpu[8];             /* this CPU's maker: "intel", "amd", "other" */
} profile_target;

void profile_target_from_info(profile_target *t, const ember_model_info *info,
                              const char *file_path);
/* Reads only the GGUF header and tensor table (no weights are touched). */
int profile_target_from_file(profile_target *t, const char *path, profile_err *err);
/* "Q4_K_M" for llama_ftype 15 etc., NULL when unknown. */

/* Does rule r fit t?  On no, *why (if non-NULL) says which test failed. */
bool profile_rule_matches(const profile_rule *r, const profile_target *t, const char **why);

/* First matching rule wins: fills *out (every field) and *rule_index.
   No match: PROFILE_E_NO_MATCH listing the rules tried. */
int profile_match(const profile *p, const profile_target *t, ember_plan_opts *out,
                  int *rule_index, profile_err *err);
/* The same for an opened model's info. */
int profile_match_info(const profile *p, const ember_model_info *info, const char *file_path,
                       ember_plan_opts *out, int *rule_index, profile_err *err);

/* ---- strategies and words (the single tables) --------------------------- */

/* Strategies a profile may name, in the engine's enum.  NULL for none. */
const char *profile_strategy_name(ember_strategy s);
const char *profile_when_name(ember_pack_when w);
const char *profile_proj_name(int bit_index);
/* Writes "q, k, v" / "all" / "none". */
void profile_proj_list(unsigned mask, char *buf, size_t cap);

/* ---- search path ---------------------------------------------------------- */

/* A value with a '/' or ending in ".yaml" is a path; otherwise NAME is
   looked up in $XDG_CONFIG_HOME/ember/profiles (default ~/.config), then
   in the shipped directory (profile_shipped_dir).  0 and the path, or -1
   with PROFILE_E_NOT_FOUND naming every place tried. */
int profile_find(const char *name_or_path, char *path_out, size_t cap, profile_err *err);

/* The user directory ($XDG_CONFIG_HOME/ember/profiles); 0 or -1. */
int profile_user_dir(char *buf, size_t cap);
/* The shipped directory: $EMBER_PROFILE_DIR, else EMBER_PKGDATADIR/profiles,
   else <dir of the executable>/profiles, else <that dir>/../profiles - the
   first that exists.  0 or -1. */
int profile_shipped_dir(char *buf, size_t cap);

typedef struct profile_entry {
    char name[128];
    char path[1024];
    bool user;               /* from the user directory */
    bool shadowing;          /* a user profile hiding a shipped one of the same name */
    bool shadowed;           /* a shipped profile hidden by a user one */
} profile_entry;

/* All *.yaml files in the user and shipped directories, sorted by name,
   user before shipped.  Returns the count (>= 0) and a malloc'd array. */
int profile_list(profile_entry **out);

/* Writes the resolved profile as YAML-ish text. */
#include <stdio.h>
void profile_print(const profile *p, FILE *out);

#endif
