#include "config.h"

#include <string.h>

#include "ember.h"
#include "plan_print.h"

static double mib(uint64_t b) { return (double)b / 1048576.0; }

void plan_summary(const ember_plan *p, char *buf, size_t cap)
{
    uint64_t total = p->bytes_by_rep[0] + p->bytes_by_rep[1] + p->bytes_by_rep[2];
    int n_rep[3] = {0, 0, 0};
    for (int i = 0; i < p->n; i++)
        if (p->e[i].kernel[0]) n_rep[p->e[i].rep]++;
    snprintf(buf, cap, "%.1f MiB resident: eager-f32 %.1f, compressed %.1f, packed %.1f MiB; "
             "matrices: %d eager, %d compressed, %d packed (of %d packable)",
             mib(total), mib(p->bytes_by_rep[0]), mib(p->bytes_by_rep[1]), mib(p->bytes_by_rep[2]),
             n_rep[0], n_rep[1], n_rep[2], p->packable);
}

void plan_print_text(const ember_plan *p, const ember_plan_opts *o, bool tensors, FILE *out)
{
    fprintf(out, "plan: strategy %s", ember_strategy_name(o->strategy));
    if (o->strategy == EMBER_STRATEGY_PACKED) {
        fprintf(out, ", pack");
        for (int i = 0; i < EMBER_PROJ_NAMES; i++)
            if (o->projections & (1u << i)) fprintf(out, " %s", ember_proj_name(i));
        fprintf(out, ", %s, evict %s, re-evict %s, prefill %s",
                o->pack_when == EMBER_PACK_AT_LOAD ? "at load"
                : o->pack_when == EMBER_PACK_BEFORE_PREFILL ? "before prefill" : "after prefill",
                o->evict_source ? "yes" : "no", o->reevict_after_prefill ? "yes" : "no",
                o->packed_prefill ? "packed" : "generic");
        /* honest about what runs: nothing packed is compressed, whatever was asked */
        if (p->packed == 0) fprintf(out, " (nothing is packed: runs as compressed; the notes say why)");
    }
    fprintf(out, "\n");
    if (tensors) {
        fprintf(out, "%-32s %-6s %-14s %-13s %-22s %-7s %10s  %s\n", "tensor", "dtype", "shape",
                "repr", "kernel", "isa", "MiB", "note");
        for (int i = 0; i < p->n; i++) {
            const ember_plan_entry *e = &p->e[i];
            char shape[32];
            if (e->n_mats > 1)   /* an MoE tensor: in x out x experts */
                snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)e->ne[0], (long long)e->ne[1],
                         (long long)e->n_mats);
            else if (e->ne[1] > 1) snprintf(shape, sizeof shape, "%lldx%lld", (long long)e->ne[0], (long long)e->ne[1]);
            else snprintf(shape, sizeof shape, "%lld", (long long)e->ne[0]);
            fprintf(out, "%-32s %-6s %-14s %-13s %-22s %-7s %10.2f  %s\n", e->name, ember_dtype_name(e->dtype),
                    shape, ember_rep_name(e->rep), e->kernel[0] ? e->kernel : "-", e->isa[0] ? e->isa : "-",
                    mib(e->resident_bytes), e->reason);
        }
    }
    /* fallbacks are listed even without --tensors: no silent fallback */
    int fb = 0;
    for (int i = 0; i < p->n; i++)
        if (p->e[i].rep == EMBER_REP_EAGER_F32 && p->e[i].kernel[0] && o->strategy != EMBER_STRATEGY_EAGER) {
            if (!tensors) fprintf(out, "fallback: %s (%s): %s\n", p->e[i].name, ember_dtype_name(p->e[i].dtype), p->e[i].reason);
            fb++;
        }
    char sum[256];
    plan_summary(p, sum, sizeof sum);
    fprintf(out, "totals: %s%s\n", sum, fb ? "" : "; no fallbacks");
}

void plan_print_json(const ember_plan *p, const ember_plan_opts *o, json_w *j)
{
    json_key(j, "plan");
    json_arr_begin(j);
    for (int i = 0; i < p->n; i++) {
        const ember_plan_entry *e = &p->e[i];
        json_obj_begin(j);
        json_kv_str(j, "name", e->name);
        json_kv_str(j, "dtype", ember_dtype_name(e->dtype));
        json_key(j, "shape");
        json_arr_begin(j);
        json_i64(j, e->ne[0]);
        json_i64(j, e->ne[1]);
        if (e->n_mats > 1) json_i64(j, e->n_mats);   /* an MoE tensor's experts */
        json_arr_end(j);
        json_kv_str(j, "representation", ember_rep_name(e->rep));
        json_kv_str(j, "kernel", e->kernel);
        json_kv_str(j, "isa", e->isa);
        json_kv_u64(j, "resident_bytes", e->resident_bytes);
        json_kv_u64(j, "token_bytes", e->token_bytes);
        json_kv_i64(j, "token_matrices", e->token_mats);
        json_kv_str(j, "reason", e->reason);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_key(j, "plan_totals");
    json_obj_begin(j);
    json_kv_str(j, "strategy", ember_strategy_name(o->strategy));
    for (int i = 0; i < 3; i++) json_kv_u64(j, ember_rep_name((ember_rep)i), p->bytes_by_rep[i]);
    json_kv_i64(j, "packable", p->packable);
    json_kv_i64(j, "packed", p->packed);
    json_obj_end(j);
}
