#!/bin/sh
# Bounded libFuzzer run of the GGUF reader (TAP). SKIPs without clang.
#   tests/fuzz/gguf_fuzz.sh [SECONDS]     (default 60)
set -u
SECS=${1:-60}
SRC=${EMBER_SRCDIR:-.}
BUILD=${EMBER_BUILDDIR:-.}
if ! command -v clang >/dev/null 2>&1; then echo "1..0 # SKIP clang not installed"; exit 0; fi
if [ ! -f "$BUILD/config.h" ]; then echo "1..0 # SKIP no config.h in $BUILD"; exit 0; fi
W=$(mktemp -d "${TMPDIR:-/tmp}/ember-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
if ! clang -g -O1 -fsanitize=fuzzer,address,undefined -DEMBER_LIBFUZZER \
        -I"$BUILD" -I"$SRC/engine" -I"$SRC/tests" \
        "$SRC/tests/fuzz/gguf_fuzz.c" "$SRC/engine/gguf.c" "$SRC/engine/dtype.c" \
        "$SRC/engine/dtype_simple.c" "$SRC/engine/dtype_kquant.c" "$SRC/engine/err.c" \
        -lm -o "$W/fuzz" 2>"$W/cc.log"; then
    echo "1..0 # SKIP clang cannot build a libFuzzer target here: $(head -c 200 "$W/cc.log" | tr '\n' ' ')"
    exit 0
fi
mkdir -p "$W/seeds" "$W/corpus"
if [ -x "$BUILD/tests/fuzz/gguf_fuzz" ]; then "$BUILD/tests/fuzz/gguf_fuzz" --make-corpus "$W/seeds" >/dev/null; fi
echo "1..1"
cd "$W" || exit 1
if ./fuzz -max_total_time="$SECS" -max_len=4096 -rss_limit_mb=1024 -print_final_stats=1 \
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
