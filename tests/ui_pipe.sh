#!/bin/sh
# Plain line mode (stdin/stdout not a terminal) on a tiny synth model,
# --demo, bad input, and ember --help against man/ember.1.  TAP output.
set -u
EMBER_BIN=${EMBER_BIN:-./ember}
SRCDIR=${EMBER_SRCDIR:-.}
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }

[ -x "$EMBER_BIN" ] || { echo "1..0 # SKIP no ember binary at $EMBER_BIN"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ember-pipe.XXXXXX") || { echo "1..0 # SKIP no temp dir"; exit 0; }
trap 'rm -rf "$tmp"' EXIT INT TERM
export XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache"
export EMBER_PROFILE_DIR="$SRCDIR/profiles" LC_ALL=C.UTF-8
unset EMBER_FAKE_ENGINE

# --help and the man page document the same options.
"$EMBER_BIN" chat --help > "$tmp/help" 2>&1; r=$?
ok $r "ember chat --help exits 0"
if [ -f "$SRCDIR/man/ember.1" ]; then
    missing=""
    for o in $(grep -Eo -- '--[a-z][a-z-]+' "$tmp/help" | sort -u); do
        grep -q -- "$(echo "$o" | sed 's/-/\\\\-/g')" "$SRCDIR/man/ember.1" || missing="$missing $o"
    done
    [ -z "$missing" ]; ok $? "every --help option is in man/ember.1 (missing:$missing)"
    extra=""
    for o in $(sed -n '/^\.SH CHAT OPTIONS/,/^\.SH \(KEYS\|COMMANDS\)/p' "$SRCDIR/man/ember.1" | grep -Eo -- '\\-\\-[a-z][a-z-]+' | sed 's/\\//g' | sort -u); do
        grep -q -- "$o" "$tmp/help" || extra="$extra $o"
    done
    [ -z "$extra" ]; ok $? "every chat option in man/ember.1 is in --help (extra:$extra)"
else
    skip "man/ember.1 not found"
    skip "man/ember.1 not found"
fi

echo hi | "$EMBER_BIN" -m "$tmp/missing.gguf" > "$tmp/o" 2> "$tmp/e"; r=$?
[ $r -ne 0 ] && grep -q 'missing.gguf' "$tmp/e"; ok $? "a missing model fails and names the file"
"$EMBER_BIN" -m x --temp hot < /dev/null > "$tmp/o" 2> "$tmp/e"; r=$?
[ $r -eq 2 ] && grep -q -- '--temp' "$tmp/e"; ok $? "a bad option value is a usage error naming the option"

if ! "$EMBER_BIN" synth -o "$tmp/tiny.gguf" --like tiny -q >/dev/null 2>&1; then
    skip "ember synth --like tiny unavailable"
    echo "1..$n"
    exit $fail
fi

printf 'hello\nsecond question\n' | "$EMBER_BIN" -m "$tmp/tiny.gguf" -n 8 --temp 0 --threads 1 --strategy compressed \
    > "$tmp/out" 2> "$tmp/err"; r=$?
ok $r "echo | ember -m MODEL exits 0 at EOF"
[ "$(wc -l < "$tmp/out")" -ge 2 ] && [ -s "$tmp/out" ]; ok $? "stdout has the two replies"
[ "$(grep -c 'tok/s' "$tmp/err")" -eq 2 ]; ok $? "one stats line per turn on stderr"
grep -Eq '\[8 tokens, [0-9.]+ tok/s, TTFT [0-9]+ ms, ctx [0-9]+/[0-9]+, RSS [0-9.]+ [KMG]iB, PSS [0-9.]+ [KMG]iB \(file [0-9.]+ [KMG]iB\), compressed\]' "$tmp/err"
ok $? "stats line has tokens, tok/s, TTFT, context, RSS, PSS (file) and strategy"
! grep -q 'tok/s' "$tmp/out"; ok $? "no stats on stdout"
c1=$(sed -n 's/.*ctx \([0-9]*\)\/.*/\1/p' "$tmp/err" | head -n 1)
c2=$(sed -n 's/.*ctx \([0-9]*\)\/.*/\1/p' "$tmp/err" | tail -n 1)
[ "$c2" -gt "$c1" ]; ok $? "the second turn continues the conversation (ctx $c1 -> $c2)"

printf 'hello\nsecond question\n' | "$EMBER_BIN" -m "$tmp/tiny.gguf" -n 8 --temp 0 --threads 1 --strategy compressed \
    > "$tmp/out2" 2>/dev/null
cmp -s "$tmp/out" "$tmp/out2"; ok $? "greedy replies are deterministic"

printf 'one\n/quit\ntwo\n' | "$EMBER_BIN" -m "$tmp/tiny.gguf" -n 4 --temp 0 > "$tmp/out" 2> "$tmp/err"; r=$?
[ $r -eq 0 ] && [ "$(grep -c 'tok/s' "$tmp/err")" -eq 1 ]; ok $? "/quit ends line mode with status 0"

printf 'hi\n' | "$EMBER_BIN" -m "$tmp/tiny.gguf" -n 4 --profile no-such-profile > "$tmp/out" 2> "$tmp/err"; r=$?
[ $r -ne 0 ] && grep -q 'no-such-profile' "$tmp/err"; ok $? "an unknown profile is refused with its name"

printf 'hi\n' | "$EMBER_BIN" --demo -n 4 > "$tmp/out" 2> "$tmp/err"; r=$?
[ $r -eq 0 ] && [ -s "$tmp/cache/ember/demo-tiny.gguf" ]; ok $? "--demo synthesizes its model under XDG_CACHE_HOME"
grep -q 'DEMO' "$tmp/err"; ok $? "--demo says it is a random-weight demo"

# A reasoning reply piped on (the fake engine scripted, a byte per token):
# the answer alone on stdout, the fold's line on stderr; --think show and
# /think print what the model said; the saved chat keeps all of it.
think='<think>
The user greets me.
</think>'
printf '%s\n\nHello! Nice to meet you.' "$think" > "$tmp/reply.txt"
n_think=$(printf '%s' "$think" | wc -c | tr -d ' ')
fake() { EMBER_FAKE_ENGINE=1 EMBER_FAKE_REPLY="$tmp/reply.txt" "$EMBER_BIN" -m fake.gguf "$@"; }
fake -p hi > "$tmp/o" 2> "$tmp/e"; r=$?
[ $r -eq 0 ] && [ "$(cat "$tmp/o")" = "Hello! Nice to meet you." ] && grep -qx "thinking… ($n_think tokens)" "$tmp/e"
ok $? "-p piped: stdout is the answer without the thinking, stderr says 'thinking… ($n_think tokens)' ($(head -c 60 "$tmp/o" | tr '\n' ' '))"
fake -p hi --think show > "$tmp/o" 2> "$tmp/e"
[ "$(head -n 1 "$tmp/o")" = "<think>" ] && grep -q 'greets me' "$tmp/o" && grep -q '^Hello! Nice' "$tmp/o" &&
    ! grep -q 'thinking…' "$tmp/e"
ok $? "--think show: stdout has what the model said, thinking included"
fake -p hi --think maybe > "$tmp/o" 2> "$tmp/e"; r=$?
[ $r -eq 2 ] && grep -q 'show or hide' "$tmp/e"
ok $? "--think takes show or hide (rc $r)"
printf 'hi\n/think\nhi\n/think hide\nhi\n' | fake > "$tmp/o" 2> "$tmp/e"
[ "$(grep -c 'greets me' "$tmp/o")" = 1 ] && [ "$(grep -c '^Hello! Nice' "$tmp/o")" = 3 ] &&
    [ "$(grep -c '^thinking… (' "$tmp/e")" = 2 ] && grep -q 'thinking unfolded' "$tmp/e" && grep -q 'thinking folded' "$tmp/e"
ok $? "plain lines: /think unfolds the next reply, /think hide folds again"
grep -q 'greets me' "$tmp"/state/ember/chats/*.json
ok $? "the saved conversation keeps the thinking the screen folded"

# A message longer than the context: "raise --ctx" only while --ctx is below
# the model's trained length (tiny: 2048), which bounds it
awk 'BEGIN { for (i = 0; i < 700; i++) printf "w%d ", i; print "" }' > "$tmp/long"
"$EMBER_BIN" -m "$tmp/tiny.gguf" -n 2 < "$tmp/long" > /dev/null 2> "$tmp/e"
grep -q "but the context holds 2048, the model's maximum: shorten it" "$tmp/e"
ok $? "a message over the model's own limit: no advice to raise --ctx ($(grep needs "$tmp/e"))"
"$EMBER_BIN" -m "$tmp/tiny.gguf" -n 2 --ctx 256 < "$tmp/long" > /dev/null 2> "$tmp/e"
grep -q "but the context holds 256: shorten it or raise --ctx (up to 2048 for this model)" "$tmp/e"
ok $? "a message over --ctx: raise it, up to the model's 2048 ($(grep needs "$tmp/e"))"

echo "1..$n"
exit $fail
