/* One generation (prompt -> tokens) with its numbers; shared by `ember run`
   and `ember bench`. */
#ifndef EMBER_RUN_REPORT_H
#define EMBER_RUN_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "ember.h"
#include "json.h"

typedef struct {
    const char *model;
    const char *prompt;        /* text, or NULL when prompt_ids is set */
    const int32_t *prompt_ids; /* bench: synthetic prompt */
    int n_prompt_ids;
    int n_predict;
    bool chat;
    int think;                 /* --chat: enable_thinking, -1 the template's default */
    const char *system;
    bool json;
    bool ignore_eos;           /* bench: always decode n_predict tokens */
    int n_ctx;
    ember_plan_opts plan;
    ember_sampler_opts samp;
} run_opts;

typedef struct {
    ember_stats st;
    int32_t *ids;              /* generated */
    int n_ids;
    uint64_t hash;
    double load_ms;
    ember_model_info info;
    ember_plan plan_totals;    /* n, bytes_by_rep, packable, packed (no entries) */
    char template_name[768];   /* --chat: the template used ("gguf (jinja)", a fallback) */
    int32_t eot;               /* --chat: the template's end-of-turn token, -1 */
} run_result;

void run_opts_default(run_opts *o);
/* Streams text to out (unless o->json); fills r. */
int run_generate(const run_opts *o, FILE *out, run_result *r, ember_err *err);
void run_result_free(run_result *r);
void run_report_text(const run_result *r, FILE *out);
void run_report_json(const run_opts *o, const run_result *r, FILE *out);
/* The pack members of a report's object, one home for their names (run
   --json, bench's child, bench --json's runs): "pack_ms", "pack_cache"
   (ember_pack_cache_state_name) and "pack_cache_write_ms". */
void run_report_pack_json(json_w *j, const char *pack_cache, double pack_ms, double pack_cache_write_ms);

#endif
