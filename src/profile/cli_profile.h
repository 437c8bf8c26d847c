/* Applying a profile (or --strategy) to a model path: shared by run, bench,
   inspect --plan. */
#ifndef EMBER_CLI_PROFILE_H
#define EMBER_CLI_PROFILE_H

#include "ember.h"
#include "sampler.h"

typedef struct {
    ember_plan_opts plan;
    ember_sampler_opts samp;   /* only the fields the profile sets are changed */
    int context;               /* 0 = not set */
    char matched[160];         /* "profile 'auto' rule 1 (line 12)", "" without a profile */
} cli_resolved;

/* Loads profile `name` (NULL = none) for `model`; `strategy` (NULL = none)
   overrides the matched rule's strategy.  Prints nothing; returns 0 or -1 with err. */
int cli_resolve(const char *name, const char *strategy, const char *model, cli_resolved *r,
                ember_err *err);

#endif
