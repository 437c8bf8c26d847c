#!/bin/sh
# --kv-cache and kv_cache: through the one option table and profile path to
# what ember run, ember inspect --plan and ember bench report (a synth model),
# and the refusals naming the allowed values.  TAP.
set -u
EMBER_BIN=${EMBER_BIN:-./ember}
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
[ -x "$EMBER_BIN" ] || { echo "1..0 # SKIP no ember binary at $EMBER_BIN"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ember-kvcli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" LC_ALL=C.UTF-8
M="$tmp/tiny.gguf"
"$EMBER_BIN" synth -q -o "$M" --like tiny --threads 1; ok $? "synth tiny"
prof() { printf 'name: t\nrules:\n  - match: {}\n    strategy: compressed\nkv_cache: %s\n' "$1" > "$tmp/$1.yaml"; }
prof q8_0
prof q4

"$EMBER_BIN" run -m "$M" --ctx 1024 --kv-cache q8_0 -n 2 -p hi > /dev/null 2> "$tmp/e1"; r=$?
# 2 layers x 2 KV heads x 1024 rows x (64 / 32 x 34 bytes) x K and V = 544 KiB
[ $r = 0 ] && grep -q '^KV q8_0 0.5 MiB (context 1024)' "$tmp/e1"
ok $? "run --kv-cache q8_0 reports the q8_0 cache: $(grep '^KV' "$tmp/e1")"
"$EMBER_BIN" run -m "$M" --ctx 1024 -n 2 -p hi > /dev/null 2> "$tmp/e2"
grep -q '^KV f16 1.0 MiB (context 1024)' "$tmp/e2"; ok $? "the default is f16: $(grep '^KV' "$tmp/e2")"
"$EMBER_BIN" run -m "$M" --ctx 1024 --profile "$tmp/q8_0.yaml" -n 2 -p hi > /dev/null 2> "$tmp/e3"
grep -q '^KV q8_0' "$tmp/e3"; ok $? "a profile's kv_cache: q8_0 applies"
"$EMBER_BIN" run -m "$M" --ctx 1024 --profile "$tmp/q8_0.yaml" --kv-cache f16 -n 2 -p hi > /dev/null 2> "$tmp/e4"
grep -q '^KV f16' "$tmp/e4"; ok $? "--kv-cache wins over the profile"

"$EMBER_BIN" run -m "$M" --kv-cache q4 -p hi > /dev/null 2> "$tmp/e5"; r=$?
[ $r = 2 ] && grep -q "kv-cache: expected one of f16, q8_0, got 'q4'" "$tmp/e5"
ok $? "--kv-cache q4 refused naming the allowed values (rc $r: $(cat "$tmp/e5"))"
"$EMBER_BIN" run -m "$M" --profile "$tmp/q4.yaml" -p hi > /dev/null 2> "$tmp/e6"; r=$?
[ $r != 0 ] && grep -q "kv_cache type 'q4'.*f16, q8_0" "$tmp/e6"
ok $? "a profile's kv_cache: q4 refused naming the allowed values ($(cat "$tmp/e6"))"

"$EMBER_BIN" inspect "$M" --plan --kv-cache q8_0 --ctx 1024 > "$tmp/o7" 2>&1
grep -q '^KV q8_0 0.5 MiB at a 1024-token context' "$tmp/o7"; ok $? "inspect --plan reports the q8_0 KV size"
"$EMBER_BIN" inspect "$M" --kv-cache q8_0 > /dev/null 2>&1; r=$?
[ $r = 2 ]; ok $? "inspect --kv-cache without --plan is refused"
"$EMBER_BIN" bench -m "$M" --kv-cache q8_0 --ctx 1024 -p 8 -n 4 -r 1 -w 0 -t 1 > "$tmp/o8" 2>&1
grep -q '^KV q8_0 0.5 MiB (context 1024)' "$tmp/o8"; ok $? "bench --kv-cache q8_0: $(grep '^KV' "$tmp/o8")"
"$EMBER_BIN" bench -m "$M" --kv-cache q4 -p 8 -n 4 > "$tmp/o9" 2>&1; r=$?
[ $r = 2 ] && grep -q "f16, q8_0" "$tmp/o9"; ok $? "bench --kv-cache q4 refused"
echo "1..$n"
exit $fail
