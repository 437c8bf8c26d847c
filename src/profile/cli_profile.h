/* The one profile-resolution path: profile + --strategy + command-line
   values + the model -> plan, sampling and generation values, label.
   Used by chat (at start and on every profile switch), run, bench and
   inspect --plan. */
#ifndef EMBER_CLI_PROFILE_H
#define EMBER_CLI_PROFILE_H

#include <stdbool.h>

#include "ember.h"
#include "options.h"

typedef struct {
    const char *profile;            /* a name or path; NULL: none */
    const char *strategy;           /* NULL: none; overrides the matched rule's strategy */
    const char *model;              /* the model's path */
    const ember_model_info *info;   /* its header, read once by the caller (NULL: read here) */
    bool first_rule;                /* no model to match (the fake engine): take rule 1 */
    ember_plan_opts plan;           /* the plan without a profile */
    gen_opts defaults;              /* the command's defaults */
    gen_opts cli;                   /* what the command line gave (cli.set says which) */
} cli_resolve_in;

typedef struct {
    ember_plan_opts plan;           /* threads included: the decided thread count */
    gen_opts gen;                   /* defaults < profile < command line */
    char label[128];                /* the profile's name, "" without one */
    char matched[160];              /* "profile 'auto' rule 1 (line 12)", "" without a profile */
    char system[4096];              /* the profile's system prompt, "" without one */
} cli_resolved;

/* Prints nothing; returns 0 or -1 with err.  Errors of the model (cannot
   be read, not a GGUF file) say so without blaming the profile; errors of
   the profile start with "profile NAME: ". */
int cli_resolve(const cli_resolve_in *in, cli_resolved *r, ember_err *err);

/* A --strategy argument: the strategy, or -1 after telling the user (one
   message for every command, naming PROG). */
int cli_strategy_arg(const char *prog, const char *arg);

#endif
