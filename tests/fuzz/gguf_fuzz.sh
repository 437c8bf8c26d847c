#!/bin/sh
# Bounded libFuzzer run of the GGUF reader (TAP). SKIPs without clang.
#   tests/fuzz/gguf_fuzz.sh [SECONDS]     (default 60)
set -u
SECS=${1:-60}
SRC=${EMBER_SRCDIR:-.}
BUILD=${EMBER_BUILDDIR:-.}
if ! command -v clang >/dev/null 2>&1; then echo "1..0 # SKIP clang not installed"; exit 0; fi
W=$(mktemp -d "${TMPDIR:-/tmp}/ember-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
if [ ! -f "$BUILD/config.h" ]; then
    # run from an unconfigured tree: the reader needs nothing configure decides
    printf '#define _GNU_SOURCE 1\n' >"$W/config.h"
    BUILD=$W
fi
# Can this clang build a libFuzzer target at all?  Only then is a failure
# to build ours a failure of the code (reported, not skipped).
printf 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }\n' >"$W/probe.c"
if ! clang -fsanitize=fuzzer "$W/probe.c" -o "$W/probe" 2>/dev/null; then
    echo "1..0 # SKIP clang cannot build a libFuzzer target here"
    exit 0
fi
if ! clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -DEMBER_LIBFUZZER \
        -I"$BUILD" -I"$SRC/engine" -I"$SRC/engine/format" -I"$SRC/engine/sys" -I"$SRC/engine/text" -I"$SRC/tests" \
        "$SRC/tests/fuzz/gguf_fuzz.c" "$SRC/engine/format/gguf.c" "$SRC/engine/format/dtype.c" \
        "$SRC/engine/format/dtype_simple.c" "$SRC/engine/format/dtype_kquant.c" "$SRC/engine/format/dtype_iq.c" "$SRC/engine/sys/err.c" "$SRC/engine/sys/pagecache.c" "$SRC/engine/sys/memstat.c" "$SRC/engine/sys/faultguard.c" "$SRC/engine/sys/safetext.c" "$SRC/engine/text/utf8.c" \
        -lm -o "$W/fuzz" 2>"$W/cc.log"; then
    echo "1..1"
    sed 's/^/# /' "$W/cc.log" | head -20
    echo "not ok 1 - gguf fuzz target does not build"
    exit 1
fi
mkdir -p "$W/seeds" "$W/corpus"
# seeds come from the plain build of the harness, or one made here
SEEDER=$BUILD/tests/fuzz/gguf_fuzz
if [ ! -x "$SEEDER" ]; then
    SEEDER=$W/seeder
    clang -O1 -I"$BUILD" -I"$SRC/engine" -I"$SRC/engine/format" -I"$SRC/engine/sys" -I"$SRC/engine/text" -I"$SRC/tests" "$SRC/tests/fuzz/gguf_fuzz.c" \
        "$SRC/engine/format/gguf.c" "$SRC/engine/format/gguf_writer.c" "$SRC/engine/format/dtype.c" \
        "$SRC/engine/format/dtype_simple.c" "$SRC/engine/format/dtype_kquant.c" "$SRC/engine/format/dtype_iq.c" "$SRC/engine/sys/err.c" "$SRC/engine/sys/pagecache.c" "$SRC/engine/sys/memstat.c" "$SRC/engine/sys/faultguard.c" "$SRC/engine/sys/safetext.c" "$SRC/engine/text/utf8.c" \
        -lm -o "$SEEDER" 2>/dev/null || SEEDER=
fi
[ -n "$SEEDER" ] && "$SEEDER" --make-corpus "$W/seeds" >/dev/null
echo "1..1"
cd "$W" || exit 1
if ./fuzz -seed=1 -max_total_time="$SECS" -max_len=4096 -rss_limit_mb=1024 -print_final_stats=1 \
        corpus seeds >"$W/fuzz.log" 2>&1; then
    echo "ok 1 - gguf reader: $(grep -o 'Done [0-9]* runs' "$W/fuzz.log") in ${SECS}s, no crash"
else
    grep -E "ERROR|SUMMARY|crash-" "$W/fuzz.log" | head -5 | sed 's/^/# /'
    for c in crash-* leak-* timeout-* oom-*; do
        [ -f "$c" ] && od -An -tx1 "$c" | head -20 | sed 's/^/# /'
    done
    echo "not ok 1 - gguf reader: the fuzzer found a failing input (see above)"
    exit 1
fi
