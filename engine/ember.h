/* libember: the public engine API.  No UI dependencies. */
#ifndef EMBER_H
#define EMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/err.h"
#include "sys/memstat.h"
#include "sys/safefile.h"
#include "sys/xdg.h"

typedef struct ember_model ember_model;
typedef struct ember_session ember_session;
typedef struct ember_tokenizer ember_tokenizer;

typedef enum {
    EMBER_STRATEGY_EAGER = 0,
    EMBER_STRATEGY_COMPRESSED = 1,
    EMBER_STRATEGY_PACKED = 2,
} ember_strategy;

const char *ember_strategy_name(ember_strategy s);
int ember_strategy_from_name(const char *s);  /* -1 when unknown */

/* Projections that the packed strategy may re-lay (bit mask). */
enum {
    EMBER_PROJ_Q = 1 << 0, EMBER_PROJ_K = 1 << 1, EMBER_PROJ_V = 1 << 2,
    EMBER_PROJ_O = 1 << 3, EMBER_PROJ_GATE = 1 << 4, EMBER_PROJ_UP = 1 << 5,
    EMBER_PROJ_DOWN = 1 << 6,
    EMBER_PROJ_SEVEN = (1 << 7) - 1,      /* the seven projections of a layer */
    /* The LM head (output.weight, or the tied embedding): not a layer
       projection and not in ALL; packed only when named. */
    EMBER_PROJ_OUTPUT = 1 << 7,
    /* Gemma 4's per-layer input: each layer's gate and projection and the
       model-wide per_layer_model_proj */
    EMBER_PROJ_PER_LAYER = 1 << 8,
    EMBER_PROJ_ALL = EMBER_PROJ_SEVEN | EMBER_PROJ_PER_LAYER,   /* every layer projection */
};
#define EMBER_PROJ_NAMES 9
const char *ember_proj_name(int bit_index);   /* "q", "k", ... "down", "output", "per_layer" */
int ember_proj_from_name(const char *name);   /* bit mask, 0 when unknown */

typedef enum {
    EMBER_PACK_AT_LOAD = 0,
    EMBER_PACK_BEFORE_PREFILL = 1,
    EMBER_PACK_AFTER_PREFILL = 2,
} ember_pack_when;

/* How the KV cache stores its rows: f16 (the reference's, the default) or
   q8_0 (blocks of 32 int8 values and an fp16 scale: 34 bytes for 64). */
typedef enum { EMBER_KV_F16 = 0, EMBER_KV_Q8_0 = 1 } ember_kv_type;
#define EMBER_KV_TYPES 2
const char *ember_kv_type_name(int t);         /* "f16", "q8_0"; NULL outside the types */
int ember_kv_type_from_name(const char *s);    /* -1 when unknown */

typedef struct ember_plan_opts {
    ember_strategy strategy;
    unsigned projections;          /* EMBER_PROJ_* mask for packed */
    ember_pack_when pack_when;
    bool evict_source;             /* MADV_DONTNEED the packed sources */
    bool reevict_after_prefill;    /* evict again after a generic prefill */
    bool packed_prefill;           /* prefill runs on the packed tiles */
    bool allow_fallback;           /* dtype without kernel -> eager for that tensor */
    int threads;                   /* 0 = one per core */
    ember_kv_type kv_cache;        /* the KV cache's row format */
    bool pack_cache;               /* keep the packed tiles in a cache file
                                      (packcache.c); off in the defaults below,
                                      on in the program's (profile key pack_cache) */
    bool model_pages;              /* the lifecycle's memory snapshots also count
                                      the model file's mapped pages (model_rss_kb):
                                      a walk of /proc/self/smaps, ~10 ms for a 1B
                                      model, so only where asked (run --json) */
} ember_plan_opts;

void ember_plan_opts_default(ember_plan_opts *o);  /* compressed, fallback on, no pack cache */

/* Architecture summary of an opened model. */
typedef struct ember_model_info {
    char arch[32];
    char name[128];
    int n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff;
    int n_expert, n_expert_used;   /* mixture of experts: experts a layer has, and runs a token (0: dense) */
    /* layers with a recurrent state instead of a KV cache (Qwen3.5's
       delta-net): ember_session_truncate goes back only to copies of it
       taken where prefills start and end (0: none) */
    int n_recurrent;
    int n_ctx_train;
    uint64_t n_params;
    int dominant_dtype;            /* dtype holding most weight bytes */
    char file_type[16];            /* general.file_type as a name ("Q4_K_M"), "" if absent */
    uint64_t file_bytes;
} ember_model_info;

/* Reads only the GGUF header: architecture, name, sizes, dtypes (for
   profile matching before a model is loaded). */
int ember_model_peek(const char *path, ember_model_info *info, ember_err *err);

ember_model *ember_model_open(const char *path, const ember_plan_opts *opts, ember_err *err);
void ember_model_free(ember_model *m);
const ember_model_info *ember_model_get_info(const ember_model *m);
ember_tokenizer *ember_model_tokenizer(ember_model *m);   /* owned by the model */
/* Why ember_model_tokenizer() is NULL (the file's tokenizer could not load). */
const char *ember_model_tokenizer_error(const ember_model *m);
/* Metadata oddities the model was accepted with (an embedding padded past
   the vocabulary, duplicate token texts, merges naming missing tokens):
   one line each, "" when none.  inspect and the plan print them. */
const char *ember_model_warnings(const ember_model *m);
/* The same checks on a file without building the model (for inspect):
   0 with the warning lines (or "") in warnings, -1 with err when the
   vocabulary is unusable (the tokenizer's error, or ids past the
   embedding).  A file without a tokenizer or embedding passes. */
int ember_vocab_check(const char *path, char *warnings, size_t cap, ember_err *err);
/* The GGUF chat template string, or NULL. */
const char *ember_model_chat_template(const ember_model *m);

/* ---- execution plan: one record per weight tensor ------------------- */

typedef enum {
    EMBER_REP_EAGER_F32 = 0,
    EMBER_REP_COMPRESSED = 1,
    EMBER_REP_PACKED = 2,
} ember_rep;

const char *ember_rep_name(ember_rep r);   /* "eager-f32", "compressed", "packed" */
/* The CPU's maker: "intel", "amd" or "other" (a profile rule's cpu:). */
const char *ember_cpu_vendor(void);

typedef struct ember_plan_entry {
    char name[96];
    int dtype;
    int64_t ne[2];
    int64_t n_mats;                /* ne[0] x ne[1] matrices in the tensor: 1, or an MoE tensor's experts */
    ember_rep rep;
    char kernel[48];               /* kernel name, "" for non-matmul tensors */
    char isa[16];
    uint64_t resident_bytes;
    /* of resident_bytes, what one decoded token reads: all of it, or an
       MoE tensor's share for the experts a token runs (n_used / n_expert) */
    uint64_t token_bytes;
    int token_mats;                /* ne[0] x ne[1] matrices a token runs: 1, or an MoE tensor's n_used */
    char reason[160];              /* why this representation ("" if as asked) */
} ember_plan_entry;

typedef struct ember_plan {
    int n;
    ember_plan_entry *e;
    uint64_t bytes_by_rep[3];
    int packable, packed;          /* projections eligible / actually packed */
} ember_plan;

const ember_plan *ember_model_plan(const ember_model *m);
/* Bytes of the KV cache (K and V) a session of n_ctx tokens and prefill
   passes of ubatch allocates with rows of type kv_type (ember_kv_type);
   n_ctx 0, ubatch 0: the session's defaults. */
size_t ember_kv_cache_bytes(const ember_model *m, int n_ctx, int kv_type, int ubatch);

/* ---- sessions -------------------------------------------------------- */

typedef struct ember_session_opts {
    int n_ctx;                     /* 0 = min(model's, 4096) */
    int threads;                   /* 0 = from plan opts, else one per core */
    /* prompt tokens per forward pass, 2..EMBER_UBATCH (0 = EMBER_UBATCH);
       a sliding-window layer's KV ring holds its window + this many */
    int ubatch;
    /* prompt tokens whose attention reads the keys in one pass (0: as many
       as the context leaves room for, up to 8; 1: one token at a time, as
       the tests compare): the same logits bit for bit either way */
    int att_block;
} ember_session_opts;

typedef enum {
    EMBER_PHASE_OPENED = 0,
    EMBER_PHASE_PACKED,
    EMBER_PHASE_EVICTED,
    EMBER_PHASE_PREFILL_DONE,
    EMBER_PHASE_REEVICTED,
    EMBER_PHASE_DECODE_DONE,
    EMBER_PHASE_COUNT
} ember_phase;

const char *ember_phase_name(ember_phase p);

/* The pack cache (engine/run/packcache.c): the packed tiles of a model
   kept in $XDG_CACHE_HOME/ember/packed, mapped read-only on later loads. */
typedef enum {
    EMBER_PACK_CACHE_OFF = 0,      /* not asked for, or nothing packed yet */
    EMBER_PACK_CACHE_HIT,          /* the tiles are the cache file's pages */
    EMBER_PACK_CACHE_WRITTEN,      /* packed here, and the file written */
    EMBER_PACK_CACHE_UNWRITTEN,    /* packed here; the file could not be written */
    EMBER_PACK_CACHE_WRITING,      /* packed here; the file is being written in the
                                      background (then written or unwritten) */
} ember_pack_cache_state;
/* "off", "hit", "written", "unwritten", "writing" */
const char *ember_pack_cache_state_name(ember_pack_cache_state s);
/* Waits for the model's pack cache file being written in the background
   (a miss writes it off the critical path, after packing) to be renamed
   into place or given up; a no-op otherwise.  ember_model_free waits too;
   a report that wants the write's outcome and time calls this first. */
void ember_model_pack_cache_wait(ember_model *m);

/* One cache file, as `ember cache list` shows it. */
typedef struct ember_pack_cache_file {
    char path[4096];
    char model[1024];              /* the model file it was made from */
    char layout[48];               /* its layouts' names, '+'-joined where several */
    int layout_version;            /* the first layout's version */
    int n_tensors;
    uint64_t bytes;                /* the file's size */
    int64_t created;               /* time_t when written */
    bool valid;                    /* false: a foreign, corrupt or truncated file */
} ember_pack_cache_file;

/* The cache directory ("<XDG_CACHE_HOME or ~/.cache>/ember/packed"); -1 when
   there is none. */
int ember_pack_cache_dir(char *buf, size_t cap);
/* Every file in the directory (n 0 when it is missing); *out is malloc'd. */
int ember_pack_cache_list(ember_pack_cache_file **out, int *n, ember_err *err);
/* What packing m would find, without packing (ember inspect --plan): 1 a
   valid file for this model file and set of packed tensors at path, 0 no
   such file (path: where packing would write it), -1 no file can serve m
   (pack cache off, not the packed strategy, nothing to pack, no cache
   directory; path untouched). */
int ember_pack_cache_probe(const ember_model *m, char *path, size_t cap);
/* Removes every cache file (and stray temporaries); *bytes and *files
   freed.  -1 with err on the first that could not be removed. */
int ember_pack_cache_clear(uint64_t *bytes, int *files, ember_err *err);

typedef struct ember_stats {
    ember_strategy strategy;
    int n_ctx, n_past;
    ember_kv_type kv_type;         /* the KV cache's row format */
    size_t kv_bytes;               /* its size (K and V, all layers) */
    int n_prompt;                  /* tokens in the last prefill */
    int n_decoded;                 /* tokens decoded since the last prefill */
    double prefill_ms, decode_ms, ttft_ms, pack_ms;
    double prefault_ms;            /* of pack_ms: the kernel faulting in (and
                                      zeroing) the fresh tile memory */
    double prefill_tps, decode_tps;
    int packed, packable;          /* tensors */
    unsigned packed_proj_mask;
    bool src_evicted;
    ember_pack_cache_state pack_cache;   /* where the tiles came from / went */
    double pack_cache_write_ms;    /* writing the cache file (not in pack_ms; 0 while
                                      still "writing") */
    char pack_cache_note[256];     /* why the cache could not be written, or "" */
    ember_memstat mem;             /* sampled at the call */
    ember_memstat phase_mem[EMBER_PHASE_COUNT];
    bool phase_seen[EMBER_PHASE_COUNT];
} ember_stats;

ember_session *ember_session_new(ember_model *m, const ember_session_opts *o, ember_err *err);
void ember_session_free(ember_session *s);
/* Clears the KV cache (n_past = 0). */
void ember_session_reset(ember_session *s);
/* Truncates the cache to n tokens (n <= n_past).  A model with sliding-
   window layers may have overwritten what position n needs (their KV ring
   holds the last window + one prefill pass (ubatch) of positions): then
   the cache is reset, so read ember_session_n_past afterwards. */
void ember_session_truncate(ember_session *s, int n);
int ember_session_n_past(const ember_session *s);
int ember_session_n_ctx(const ember_session *s);
/* Asked between prefill micro-batches; true stops the prefill. */
typedef bool (*ember_cancel_fn)(void *ud);
/* Lets a long prefill be interrupted (fn NULL: never). */
void ember_session_set_cancel(ember_session *s, ember_cancel_fn fn, void *ud);
#define EMBER_CANCELLED (-2)
/* True when the next prefill will first pack the weights (pack: before-prefill
   and not packed yet): a front end can say so, and call ember_session_pack,
   instead of showing the pause as prefill. */
bool ember_session_pack_pending(const ember_session *s);
/* Runs that packing now (and the source eviction the profile asks for); a
   no-op when nothing is pending. */
int ember_session_pack(ember_session *s, ember_err *err);
/* The same packing ahead of any prompt (a front end idle after loading, the
   user still typing): nobody waits for it, so the next TTFT leaves it out. */
int ember_session_pack_ahead(ember_session *s, ember_err *err);
/* Processes n tokens as one batch; writes the last position's logits
   (n_vocab floats) to last_logits if non-NULL, and all rows to all_logits
   (n * n_vocab) if non-NULL.  Fails (no write) when the context would overflow.
   Returns EMBER_CANCELLED when the cancel function stopped it: the positions
   done so far stay cached (ember_session_n_past tells how many). */
int ember_prefill(ember_session *s, const int32_t *tokens, int n,
                  float *last_logits, float *all_logits, ember_err *err);
int ember_decode(ember_session *s, int32_t token, float *logits, ember_err *err);
void ember_stats_get(const ember_session *s, ember_stats *st);
/* Records the decode-done memory snapshot (end of a generation). */
void ember_session_mark_decode_done(ember_session *s);

/* ---- text from files, on its way to a terminal ------------------------- */

enum { EMBER_CLEAN_KEEP_NL = 1 };   /* keep '\n' and '\t' */
/* Copies n bytes of src to dst (at most cap - 1 bytes and a NUL; whole
   characters only) with every control character, DEL, C1 control and
   non-UTF-8 byte replaced by '?', so metadata, profile text or a quoted
   file name cannot send escape sequences to the terminal.  Returns the
   length written.  dst may equal src (the text never grows). */
size_t ember_text_clean(char *dst, size_t cap, const char *src, size_t n, unsigned flags);

/* ---- fatal signals ---------------------------------------------------- */

/* Installs handlers for SIGBUS, SIGSEGV, SIGABRT, SIGQUIT, SIGFPE, SIGILL
   that call restore (async-signal-safe; NULL for none) and then die as the
   signal would, except that a SIGBUS inside a mapped model file (truncated
   or rewritten while in use) prints "the model file changed on disk while
   in use" (inside a mapped pack cache file: "the pack cache file ...") and
   exits with status 128 + SIGBUS.  Call again to change
   restore (a full-screen UI sets it while it owns the terminal). */
void ember_fault_guard_install(void (*restore)(void));

/* Length (1..4) of the well-formed UTF-8 sequence at s (n bytes left), its
   code point in *cp (cp may be NULL); 0 when the bytes there are not one
   (truncated, overlong, a surrogate, past U+10FFFF) or n is 0.  Public so
   that front ends judge text exactly as the tokenizer and GGUF reader do. */
int ember_utf8_decode(const char *s, size_t n, uint32_t *cp);
/* The same as the reference tokenizer reads UTF-8 (unicode_cpt_from_utf8):
   overlong forms and surrogates are their code points; still 0 for a stray
   continuation byte, a truncated sequence or past U+10FFFF. */
int ember_utf8_decode_lenient(const char *s, size_t n, uint32_t *cp);
/* The shortest UTF-8 form of cp (at most U+10FFFF; a surrogate is written
   as its three bytes, for callers that keep one as the reference does) in
   out; returns its length (1..4). */
int ember_utf8_encode(uint32_t cp, char out[4]);

/* The name of a GGUF general.file_type value ("Q4_K_M"), NULL for a number
   that names nothing; FILE_TYPE_MAX bounds the numbers that may (so a
   front end can list them all, e.g. to suggest one). */
const char *ember_file_type_name(int64_t ftype);
#define EMBER_FILE_TYPE_MAX 40

/* ---- probes (engine/sys/bandwidth.c) ------------------------------------- */

/* Memory read bandwidth in GB/s with `threads` threads: the best of several
   read patterns (streams per thread, prefetch distances), a few passes each. */
double ember_bandwidth(int threads);
/* The thread count the bandwidth probes use for `threads` (0: one per core). */
int ember_probe_threads(int threads);
/* The same, reading the file at path through a read-only shared mapping
   (after one pass that maps its pages in): what compressed weights see. */
double ember_bandwidth_file(const char *path, int threads);
/* The int8 multiply-add peak in GMAC/s with `threads` threads (engine/kernels/
   probe.c), in the instruction the prefill kernels use on this CPU; *how
   names it.  *ordered (if not NULL): the same with the float convert + FMA
   that the reference's order adds to each instruction for Q8_0, the ceiling
   of a bit-identical Q8_0 GEMM.  What prefill is measured against (ember
   bench --compute). */
double ember_compute_probe(int threads, const char **how, double *ordered);

/* ---- the engine's public modules ----------------------------------------
   ember.h is the only engine header src/ and ui/ include (their include
   path holds engine/ alone).  These module headers are part of the public
   API as they stand: the GGUF reader and writer and the dtype table (for
   synth, inspect, template), tokenizers, the sampler, chat templates and the
   Jinja interpreter, the worker a front end drives, the clock, page-cache
   control and the thread pool.  Kernels, the execution plan, the lifecycle,
   sessions' internals and the forward pass stay behind this line. */
#include "format/gguf.h"
#include "format/dtype.h"
#include "text/tokenizer.h"
#include "text/sampler.h"
#include "text/chat.h"
#include "text/chat_template.h"
#include "text/jinja.h"
#include "sys/clock.h"
#include "sys/pagecache.h"
#include "sys/threads.h"
#include "worker/worker.h"

#endif
