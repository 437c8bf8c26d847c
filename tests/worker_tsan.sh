#!/bin/sh
# The worker's queue, cancel and quit tests (tests/test_worker.c) built
# separately with ThreadSanitizer: the main build may use ASan, which
# cannot be combined with TSan.  TAP; SKIP without a TSan-capable cc.
set -u
SRC=${EMBER_SRCDIR:-.}
BUILD=${EMBER_BUILDDIR:-.}
CC=${TSAN_CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ember-tsan.XXXXXX") || { echo "1..0 # SKIP no temp dir"; exit 0; }
trap 'rm -rf "$tmp"' EXIT INT TERM

# A cc without TSan SKIPs; a failure to build our own files is a failure
# (a missing file in the list below once turned this test into a SKIP).
printf 'int main(void) { return 0; }\n' > "$tmp/probe.c"
if ! $CC -fsanitize=thread -pthread "$tmp/probe.c" -o "$tmp/probe" 2> "$tmp/cc.log"; then
    echo "1..0 # SKIP $CC cannot build with -fsanitize=thread: $(head -n 1 "$tmp/cc.log")"
    exit 0
fi
if ! $CC -std=gnu11 -fsanitize=thread -g -O1 -pthread -I"$BUILD" $(for d in "$SRC"/engine/*/; do printf -- "-I%s " "$d"; done) -I"$SRC/engine" -I"$SRC/tests" \
        "$SRC/tests/test_worker.c" "$SRC/engine/worker/worker.c" "$SRC/engine/worker/worker_fake.c" \
        "$SRC/engine/sys/memstat.c" "$SRC/engine/sys/err.c" "$SRC/engine/sys/safetext.c" \
        "$SRC/engine/text/utf8.c" -o "$tmp/test_worker" 2> "$tmp/cc.log"; then
    echo "1..1"
    echo "not ok 1 - test_worker does not build with -fsanitize=thread:"
    sed 's/^/# /' "$tmp/cc.log" | head -n 20
    exit 0
fi
TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$tmp/test_worker" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q 'unexpected memory mapping\|FATAL: ThreadSanitizer' "$tmp/err"; then
    echo "1..0 # SKIP ThreadSanitizer cannot run here: $(grep -m1 'ThreadSanitizer' "$tmp/err")"
    exit 0
fi
echo "1..3"
if ! grep -q 'WARNING: ThreadSanitizer' "$tmp/err"; then echo "ok 1 - no data race reported"
else echo "not ok 1 - ThreadSanitizer reports:"; sed 's/^/# /' "$tmp/err" | head -n 40; fi
if [ $rc -eq 0 ]; then echo "ok 2 - test_worker exits 0 under TSan"; else echo "not ok 2 - test_worker exit $rc"; fi
if grep -q '^1\.\.' "$tmp/out" && ! grep -q '^not ok' "$tmp/out"; then echo "ok 3 - every worker test passes under TSan"
else echo "not ok 3 - worker tests under TSan:"; grep '^not ok' "$tmp/out" | sed 's/^/# /'; fi
