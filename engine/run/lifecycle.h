/* The weight strategy's lifecycle: packing, source eviction, re-eviction
   and the memory snapshots around them, each at the phase the profile
   names, on the session's pool.  The session calls one entry point at each
   of its moments; what happens there is the lifecycle's business. */
#ifndef EMBER_LIFECYCLE_H
#define EMBER_LIFECYCLE_H

#include "session.h"

typedef enum {
    EMBER_AT_OPEN,          /* the session opened: packing "at load"; snapshot "opened" */
    EMBER_AT_AHEAD,         /* a front end idle before any prompt: packing "before prefill", early */
    EMBER_AT_PREFILL,       /* a prefill starts: packing "before prefill" */
    EMBER_AT_PREFILL_DONE,  /* snapshot "prefill"; re-evicting what a generic prefill mapped back */
    EMBER_AT_DECODE,        /* a token is decoded: packing "after prefill" */
    EMBER_AT_DECODE_DONE,   /* snapshot "decode" */
    EMBER_AT_COUNT
} ember_moment;

/* Does what the profile asks at this moment. */
int ember_lifecycle(ember_session *s, ember_moment at, ember_err *err);
/* True when the lifecycle packs at this moment. */
bool ember_lifecycle_packs(const ember_session *s, ember_moment at);
/* The lifecycle's part of the stats (packing time, packed tensors, eviction). */
void ember_lifecycle_stats(const ember_session *s, ember_stats *st);

#endif
