#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "ember.h"
#include "json.h"
#include "run_report.h"

void run_opts_default(run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n_predict = 128;
    o->think = -1;
    ember_plan_opts_default(&o->plan);
    ember_sampler_opts_default(&o->samp);
    o->samp.temperature = 0;
    o->samp.top_k = 40;
    o->samp.top_p = 0.95f;
    o->samp.min_p = 0.05f;
    o->samp.repeat_penalty = 1.0f;
    o->samp.repeat_last_n = 64;
}

static int32_t *tokenize_prompt(const run_opts *o, ember_model *m, run_result *r, int *n, ember_err *err)
{
    ember_tokenizer *tok = ember_model_tokenizer(m);
    if (!tok) {
        ember_seterr(err, "the model's tokenizer cannot be used: %s", ember_model_tokenizer_error(m));
        return NULL;
    }
    char *text = NULL;
    uint8_t *user = NULL;      /* the prompt's bytes: never control tokens */
    bool special = false;
    if (o->chat) {
        ember_chat_template_opts to = {.jinja = ember_model_chat_template(m), .tok = tok};
        ember_chat_template *t = ember_chat_template_new(&to);
        if (!t) {
            ember_seterr(err, "out of memory");
            return NULL;
        }
        if (!ember_chat_template_set_thinking(t, o->think) && o->think >= 0 && !o->json)
            fprintf(stderr, "reasoning: the chat template has no thinking switch (enable_thinking); nothing changes\n");
        ember_chat_msg msgs[2];
        size_t nm = 0;
        if (o->system) msgs[nm++] = (ember_chat_msg){"system", o->system};
        msgs[nm++] = (ember_chat_msg){"user", o->prompt};
        text = ember_chat_template_render(t, msgs, nm, true, &user);
        snprintf(r->template_name, sizeof r->template_name, "%s", ember_chat_template_name(t));
        r->eot = ember_chat_template_eot(t, NULL);
        ember_chat_template_free(t);
        if (!o->json) fprintf(stderr, "template: %s\n", r->template_name);
        special = true;
    } else {
        text = strdup(o->prompt);
    }
    if (!text) {
        ember_seterr(err, "out of memory");
        return NULL;
    }
    size_t len = strlen(text);
    int cap = (int)len + 16;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    int k = ids ? ember_tokenize_masked(tok, text, len, true, special, user, ids, cap, err) : -1;
    free(text);
    free(user);
    if (k < 0 || k > cap) {
        if (k > cap) ember_seterr(err, "prompt tokenization overflow");
        free(ids);
        return NULL;
    }
    *n = k;
    return ids;
}

int run_generate(const run_opts *o, FILE *out, run_result *r, ember_err *err)
{
    memset(r, 0, sizeof *r);
    r->eot = -1;
    double t0 = ember_now_ms();
    ember_plan_opts po = o->plan;
    po.model_pages = o->json;   /* the report's model_rss_kb */
    ember_model *m = ember_model_open(o->model, &po, err);
    if (!m) return -1;
    r->load_ms = ember_now_ms() - t0;
    r->info = *ember_model_get_info(m);
    const ember_plan *pl = ember_model_plan(m);
    r->plan_totals = *pl;
    r->plan_totals.e = NULL;
    int np = 0, rc = -1;
    int32_t *prompt = NULL;
    ember_session *s = NULL;
    ember_sampler *smp = NULL;
    float *logits = NULL;
    if (o->prompt_ids) {
        prompt = malloc((size_t)(o->n_prompt_ids ? o->n_prompt_ids : 1) * sizeof *prompt);
        if (!prompt) goto done;
        memcpy(prompt, o->prompt_ids, (size_t)o->n_prompt_ids * sizeof *prompt);
        np = o->n_prompt_ids;
    } else if (!(prompt = tokenize_prompt(o, m, r, &np, err))) {
        goto done;
    }
    if (np == 0) {
        ember_seterr(err, "the prompt is empty");
        goto done;
    }
    const int V = r->info.n_vocab;
    /* n_predict -1 (the option table's "no limit"): until the model stops
       or the context (default 4096, as in the chat) is full */
    int n_predict = o->n_predict;
    int n_ctx = o->n_ctx > 0 ? o->n_ctx : n_predict < 0 ? 4096 : np + n_predict + 1;
    ember_session_opts so = {.n_ctx = n_ctx, .threads = o->plan.threads};
    if (!(s = ember_session_new(m, &so, err))) goto done;
    if (n_predict < 0) n_predict = ember_session_n_ctx(s) - np;
    if (n_predict < 0 || np + n_predict > ember_session_n_ctx(s)) {
        /* a --ctx above the model's trained length was cut to it: say so,
           or the number shown contradicts the one given */
        ember_seterr(err, "%d prompt + %d new tokens do not fit the %d-token context%s",
                     np, o->n_predict, ember_session_n_ctx(s),
                     n_ctx > ember_session_n_ctx(s) ? " (the model's maximum)" : "");
        goto done;
    }
    logits = malloc((size_t)V * sizeof *logits);
    r->ids = malloc((size_t)(n_predict + 1) * sizeof *r->ids);
    smp = ember_sampler_new(&o->samp, V);
    if (!logits || !r->ids || !smp) {
        ember_seterr(err, "out of memory");
        goto done;
    }
    for (int i = 0; i < np; i++) ember_sampler_accept(smp, prompt[i]);
    if (ember_prefill(s, prompt, np, logits, NULL, err)) goto done;
    ember_tokenizer *tok = ember_model_tokenizer(m);
    ember_detok dt;
    ember_detok_init(&dt);
    char piece[256];
    for (int i = 0; i < n_predict; i++) {
        int32_t id = ember_sampler_sample(smp, logits);
        r->ids[r->n_ids++] = id;
        if (tok && !o->json && out) {
            int k = ember_detok_push(&dt, tok, id, piece, sizeof piece);
            if (k > 0) {
                fwrite(piece, 1, (size_t)k, out);
                if (out == stdout) ember_stdout_flush();   /* keeps a failure's reason for the exit */
                else fflush(out);
            }
        }
        if (!o->ignore_eos && tok && (ember_tok_is_eog(tok, id) || (r->eot >= 0 && id == r->eot))) break;
        if (i + 1 < n_predict && ember_decode(s, id, logits, err)) goto done;
    }
    if (tok && !o->json && out) {
        int k = ember_detok_flush(&dt, piece, sizeof piece);
        if (k > 0) fwrite(piece, 1, (size_t)k, out);
        fputc('\n', out);
    }
    ember_session_mark_decode_done(s);
    ember_stats_get(s, &r->st);
    /* a miss writes the pack cache file in the background, off the TTFT:
       the report waits for it to tell how it ended and what it cost (a
       person at a terminal is told what the wait is) */
    if (r->st.pack_cache == EMBER_PACK_CACHE_WRITING && isatty(STDERR_FILENO))
        fprintf(stderr, "ember: finishing the pack cache file for the next start...\n");
    ember_model_pack_cache_wait(m);
    ember_stats after;
    ember_stats_get(s, &after);
    r->st.pack_cache = after.pack_cache;
    r->st.pack_cache_write_ms = after.pack_cache_write_ms;
    memcpy(r->st.pack_cache_note, after.pack_cache_note, sizeof r->st.pack_cache_note);
    r->hash = ember_hash_tokens(r->ids, r->n_ids);
    rc = 0;
done:
    free(prompt);
    free(logits);
    ember_sampler_free(smp);
    ember_session_free(s);
    ember_model_free(m);
    return rc;
}

void run_result_free(run_result *r)
{
    free(r->ids);
    r->ids = NULL;
}

void run_report_text(const run_result *r, FILE *out)
{
    const ember_stats *st = &r->st;
    fprintf(out, "prompt tokens %d, generated %d, strategy %s\n", st->n_prompt, r->n_ids,
            ember_strategy_name(st->strategy));
    fprintf(out, "TTFT %.1f ms, prefill %.1f tok/s, decode %.2f tok/s\n", st->ttft_ms,
            st->prefill_tps, st->decode_tps);
    if (st->packed && st->pack_cache == EMBER_PACK_CACHE_HIT)
        fprintf(out, "packed %d/%d tensors from cache in %.1f ms (the pack cache file mapped, file-backed)%s\n",
                st->packed, st->packable, st->pack_ms, st->src_evicted ? ", sources not read" : "");
    else if (st->packed)
        fprintf(out, "packed %d/%d tensors in %.0f ms (%.0f ms of it faulting in fresh memory)%s%s\n",
                st->packed, st->packable, st->pack_ms, st->prefault_ms, st->src_evicted ? ", sources evicted" : "",
                st->pack_cache == EMBER_PACK_CACHE_WRITTEN ? ", pack cache written" : "");
    fprintf(out, "KV %s %.1f MiB (context %d)\n", ember_kv_type_name(st->kv_type), (double)st->kv_bytes / 1048576,
            st->n_ctx);
    fprintf(out, "peak RSS %.1f MiB, RSS %.1f MiB, Pss_File %.1f MiB, Pss_Anon %.1f MiB\n",
            st->mem.hwm_kb / 1024.0, st->mem.rss_kb / 1024.0, st->mem.pss_file_kb / 1024.0,
            st->mem.pss_anon_kb / 1024.0);
    if (st->mem.valid)
        fprintf(out, "file pages mapped 2 MiB at a time (FilePmdMapped): %.1f MiB\n", st->mem.file_pmd_kb / 1024.0);
    fprintf(out, "hash fnv1a64:%016llx\n", (unsigned long long)r->hash);
}

static void mem_json(json_w *j, const ember_memstat *m)
{
    json_obj_begin(j);
    json_kv_i64(j, "rss_kb", m->rss_kb);
    json_kv_i64(j, "pss_kb", m->pss_kb);
    json_kv_i64(j, "pss_anon_kb", m->pss_anon_kb);
    json_kv_i64(j, "pss_file_kb", m->pss_file_kb);
    json_kv_i64(j, "file_pmd_kb", m->file_pmd_kb);
    json_kv_i64(j, "model_rss_kb", m->model_rss_kb);
    json_kv_i64(j, "hwm_kb", m->hwm_kb);
    json_kv_i64(j, "minflt", m->minflt);
    json_kv_i64(j, "majflt", m->majflt);
    json_obj_end(j);
}

void run_report_pack_json(json_w *j, const char *pack_cache, double pack_ms, double pack_cache_write_ms)
{
    json_kv_f64(j, "pack_ms", pack_ms);
    json_kv_str(j, "pack_cache", pack_cache);
    json_kv_f64(j, "pack_cache_write_ms", pack_cache_write_ms);
}

void run_report_json(const run_opts *o, const run_result *r, FILE *out)
{
    const ember_stats *st = &r->st;
    json_w j;
    json_init(&j, out, false);
    json_obj_begin(&j);
    json_kv_str(&j, "model", o->model);
    json_kv_str(&j, "architecture", r->info.arch);
    json_kv_str(&j, "strategy", ember_strategy_name(st->strategy));
    if (o->chat) json_kv_str(&j, "template", r->template_name);
    json_kv_i64(&j, "threads", o->plan.threads);
    json_kv_str(&j, "kv_cache", ember_kv_type_name(st->kv_type));
    json_kv_u64(&j, "kv_bytes", st->kv_bytes);
    json_kv_i64(&j, "n_ctx", st->n_ctx);
    json_kv_i64(&j, "prompt_tokens", st->n_prompt);
    json_kv_i64(&j, "generated_tokens", r->n_ids);
    json_kv_f64(&j, "load_ms", r->load_ms);
    json_kv_f64(&j, "ttft_ms", st->ttft_ms);
    json_kv_f64(&j, "prefill_ms", st->prefill_ms);
    json_kv_f64(&j, "prefill_tps", st->prefill_tps);
    json_kv_f64(&j, "decode_ms", st->decode_ms);
    json_kv_f64(&j, "decode_tps", st->decode_tps);
    run_report_pack_json(&j, ember_pack_cache_state_name(st->pack_cache), st->pack_ms, st->pack_cache_write_ms);
    json_kv_f64(&j, "prefault_ms", st->prefault_ms);
    json_kv_i64(&j, "packed_tensors", st->packed);
    json_kv_i64(&j, "packable_tensors", st->packable);
    json_kv_bool(&j, "source_evicted", st->src_evicted);
    json_kv_i64(&j, "peak_rss_kb", st->mem.hwm_kb);
    char h[32];
    snprintf(h, sizeof h, "fnv1a64:%016llx", (unsigned long long)r->hash);
    json_kv_str(&j, "hash", h);
    json_key(&j, "resident_bytes");
    json_obj_begin(&j);
    for (int i = 0; i < 3; i++) json_kv_u64(&j, ember_rep_name((ember_rep)i), r->plan_totals.bytes_by_rep[i]);
    json_obj_end(&j);
    json_key(&j, "memory");
    mem_json(&j, &st->mem);
    json_key(&j, "phases");
    json_obj_begin(&j);
    for (int p = 0; p < EMBER_PHASE_COUNT; p++) {
        if (!st->phase_seen[p]) continue;
        json_key(&j, ember_phase_name((ember_phase)p));
        mem_json(&j, &st->phase_mem[p]);
    }
    json_obj_end(&j);
    json_key(&j, "ids");
    json_arr_begin(&j);
    for (int i = 0; i < r->n_ids; i++) json_i64(&j, r->ids[i]);
    json_arr_end(&j);
    json_obj_end(&j);
    json_finish(&j);
}
