#!/bin/sh
# The bounded fuzzing step of .ci/run: the GGUF reader, the profile
# loader and the Jinja interpreter under libFuzzer + ASan/UBSan, SECONDS
# each (default 60).  Needs a
# configured build directory (BUILD) for config.h and libember.a.
#   tests/fuzz/run-ci.sh BUILD [SECONDS]
set -u
BUILD=$(cd "${1:?usage: run-ci.sh BUILD [SECONDS]}" && pwd)
SECS=${2:-60}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export EMBER_SRCDIR="$SRC" EMBER_BUILDDIR="$BUILD"
rc=0
# The run is seeded so that a failure seen here can be replayed at home;
# the failing input is printed (hex) because the work directory goes away.
show_crash() {
    for c in "$1"/crash-* "$1"/leak-* "$1"/timeout-* "$1"/oom-*; do
        [ -f "$c" ] || continue
        echo "# failing input $(basename "$c") (replay: xxd -r -p > in; ./target in):"
        od -An -v -tx1 "$c" | tr -d ' \n' | head -c 2000 | fold -w 76 | sed 's/^/#   /'
        echo
    done
}
echo "# fuzz: GGUF reader, ${SECS}s"
sh "$SRC/tests/fuzz/gguf_fuzz.sh" "$SECS" || rc=1

echo "# fuzz: profile loader, ${SECS}s"
if ! command -v clang >/dev/null 2>&1; then
    echo "1..0 # SKIP clang not installed"
    exit $rc
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/ember-pfuzz.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
# libember.a from the plain build is gcc code: the fuzz target links the
# engine sources it needs itself, compiled by clang with the sanitizers
if ! clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -DEMBER_LIBFUZZER \
        -I"$BUILD" -I"$SRC/engine" $(for d in "$SRC"/engine/*/; do printf -- "-I%s " "$d"; done) -I"$SRC/src/profile" -I"$SRC/src/tools" $(pkg-config --cflags yaml-0.1) \
        "$SRC/tests/fuzz/profile_fuzz.c" "$SRC"/src/profile/profile*.c "$SRC/src/profile/options.c" \
        "$SRC/src/tools/numarg.c" \
        "$SRC"/engine/*/*.c \
        $(pkg-config --libs yaml-0.1 libpcre2-8) -lm -lpthread -o "$W/pfuzz" 2>"$W/cc.log"; then
    # gguf_fuzz.sh already skipped if clang cannot build any libFuzzer
    # target; here a build failure is the code's
    echo "1..1"; sed 's/^/# /' "$W/cc.log" | head -20
    echo "not ok 1 - profile fuzz target does not build"
    rc=1                      # the other targets still run
elif cp -r "$SRC/tests/fuzz/profile_corpus" "$W/corpus" && echo "1..1" &&
     (cd "$W" && ./pfuzz -seed=1 -max_total_time="$SECS" -max_len=2048 -rss_limit_mb=1024 corpus >fuzz.log 2>&1); then
    echo "ok 1 - profile loader: $(grep -o 'Done [0-9]* runs' "$W/fuzz.log") in ${SECS}s, no crash"
else
    grep -E "ERROR|SUMMARY" "$W/fuzz.log" | head -5 | sed 's/^/# /'
    show_crash "$W"
    echo "not ok 1 - profile loader: the fuzzer found a failing input"
    rc=1
fi

echo "# fuzz: Jinja interpreter (chat templates), ${SECS}s"
if ! clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -DEMBER_LIBFUZZER \
        -I"$BUILD" -I"$SRC/engine" -I"$SRC/engine/text" "$SRC/tests/fuzz/jinja_fuzz.c" "$SRC"/engine/text/jinja_*.c \
        "$SRC/engine/text/utf8.c" -lm -o "$W/jfuzz" 2>"$W/jcc.log"; then
    echo "1..1"; sed 's/^/# /' "$W/jcc.log" | head -20
    echo "not ok 1 - jinja fuzz target does not build"
    exit 1
fi
cp -r "$SRC/tests/fuzz/jinja_corpus" "$W/jcorpus"
echo "1..1"
if (cd "$W" && ./jfuzz -seed=1 -max_total_time="$SECS" -max_len=4096 -rss_limit_mb=2048 -timeout=20 \
        -dict="$SRC/tests/fuzz/jinja.dict" jcorpus >jfuzz.log 2>&1); then
    echo "ok 1 - jinja interpreter: $(grep -o 'Done [0-9]* runs' "$W/jfuzz.log") in ${SECS}s, no crash"
else
    grep -E "ERROR|SUMMARY" "$W/jfuzz.log" | head -5 | sed 's/^/# /'
    show_crash "$W"
    echo "not ok 1 - jinja interpreter: the fuzzer found a failing input"
    rc=1
fi
exit $rc
