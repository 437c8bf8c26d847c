/* A session's memory is resident when it opens (engine/run/session.c,
   resident): the first prompt takes no page fault in the KV cache or the
   working buffers.  Eager weights are anonymous memory written at load, so
   with them any fault during the first prefill is the session's own; on
   the 2-vCPU VMs each cost 11-17 us, ~5000 of them in a first 128-token
   gemma-4-e2b prompt before. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ember.h"
#include "synth_dir.h"
#include "tap.h"

static long minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

int main(void)
{
    synth_dir sd;
    char model[256];
    synth_dir_open(&sd, "resident");
    if (!synth_model(&sd, "tiny", "Q8_0", 0, model, sizeof model)) return tap_done();

    ember_plan_opts po;
    ember_plan_opts_default(&po);
    po.strategy = EMBER_STRATEGY_EAGER;
    po.threads = 2;
    ember_err err;
    ember_model *m = ember_model_open(model, &po, &err);
    if (!tap_ok(m != NULL, "opened eager")) {
        tap_diag("%s", err.msg);
        return tap_done();
    }
    const int V = ember_model_get_info(m)->n_vocab, n = 200;
    int32_t *toks = malloc((size_t)n * sizeof *toks);
    float *logits = malloc((size_t)V * sizeof *logits);
    for (int i = 0; i < n; i++) toks[i] = (int32_t)((i * 37 + 5) % V);
    ember_session_opts so = {.n_ctx = 1024, .threads = 2};
    ember_session *s = ember_session_new(m, &so, &err);
    /* one short prompt first: the pool's threads and the kernels' own
       per-thread scratch are touched here; what the long prompt then
       faults in is the working buffers' rows past the first few */
    int rc = s ? ember_prefill(s, toks, 4, logits, NULL, &err) : -1;
    long f0 = minflt();
    if (!rc) rc = ember_prefill(s, toks + 4, n - 4, logits, NULL, &err);
    long f1 = minflt();
    if (!rc) rc = ember_decode(s, toks[0], logits, &err);
    long f2 = minflt();
    if (rc) tap_diag("%s", err.msg);
    /* before, the working buffers' rows took 370 faults here; the bound
       leaves room for a sanitizer's own bookkeeping (ASan took 9) */
    tap_ok(!rc && f1 - f0 <= 32, "a %d-token prompt after a 4-token one takes %ld page faults (at most 32)", n - 4, f1 - f0);
    tap_ok(!rc && f2 - f1 <= 32, "a decode step after it takes %ld (at most 32)", f2 - f1);
    ember_session_free(s);
    ember_model_free(m);
    free(toks);
    free(logits);
    synth_dir_close(&sd);
    return tap_done();
}
