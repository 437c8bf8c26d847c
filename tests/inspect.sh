#!/bin/sh
# ember inspect on the fixtures (SKIPped when the optional fixtures folder,
# doc/DESIGN.md "Fixtures", is absent), on a model written by `ember synth`,
# and on broken files: exit codes, one-line errors, valid JSON with the
# right inventory.
set -u
BIN=${EMBER_BIN:-./ember}
SHARED=${EMBER_SHARED:-}
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }

if [ ! -x "$BIN" ]; then echo "1..0 # SKIP $BIN not built"; exit 0; fi
if command -v python3 >/dev/null 2>&1; then PY=python3; else PY=; fi
T=$(mktemp -d "${TMPDIR:-/tmp}/ember-inspect.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

# dtype_count FILE.json DTYPE -> the count in "dtypes" (pretty output: the
# "count" line follows the dtype's line)
dtype_count() { grep -A1 "^    \"$2\": {" "$1" | sed -n 's/.*"count": \([0-9]*\).*/\1/p'; }
json_valid() { if [ -n "$PY" ]; then $PY -m json.tool "$1" >/dev/null 2>&1; else return 0; fi; }

# check FILE TENSORS "DTYPE=N ..." : text, --json, --tensors
check() {
    f=$1 want_t=$2 want_d=$3 name=$(basename "$1")
    "$BIN" inspect "$f" >"$T/out" 2>"$T/err"
    ok $? "$name: inspect exits 0"
    grep -q "^architecture: " "$T/out" && grep -q "^$want_t tensors" "$T/out"
    ok $? "$name: text shows the architecture and $want_t tensors"
    "$BIN" inspect --json "$f" >"$T/j" 2>"$T/err"
    rc=$?
    good=0
    [ $rc -eq 0 ] || good=1
    json_valid "$T/j" || good=1
    grep -q "\"tensor_count\": $want_t," "$T/j" || good=1
    grep -q "\"file_bytes\": $(wc -c <"$f" | tr -d ' ')," "$T/j" || good=1
    for d in $want_d; do
        [ "$(dtype_count "$T/j" "${d%%=*}")" = "${d#*=}" ] || good=1
    done
    ok $good "$name: --json is valid${PY:+ (python3 -m json.tool)} with tensor_count $want_t, file_bytes, dtypes $want_d"
    "$BIN" inspect --tensors "$f" >"$T/out" 2>&1
    rows=$(grep -c '^  [a-z_0-9.]*\.\(weight\|bias\) ' "$T/out")
    [ "$rows" -eq "$want_t" ]
    ok $? "$name: --tensors lists $want_t tensors (got $rows)"
}

# expect_fail FILE WHAT: non-zero exit (not a signal), exactly one stderr line
expect_fail() {
    "$BIN" inspect "$1" >"$T/out" 2>"$T/err"
    rc=$?
    lines=$(wc -l <"$T/err" | tr -d ' ')
    [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$lines" -eq 1 ] && [ ! -s "$T/out" ]
    ok $? "$2: exit $rc, $lines stderr line: $(head -c 150 "$T/err")"
}

"$BIN" inspect --help >"$T/out" 2>&1
ok $? "inspect --help exits 0"
grep -q -- "--tensors" "$T/out"
ok $? "--help documents --tensors"
"$BIN" inspect --bogus x.gguf >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "unknown option: exit 2"

# a model of our own, so the test has substance without the fixtures
if "$BIN" synth -q -o "$T/tiny.gguf" --like tiny --dtype F16 2>"$T/err"; then
    check "$T/tiny.gguf" 22 "F32=6 F16=16"
    "$BIN" inspect "$T/tiny.gguf" | grep -q "^heads / KV heads: 4 / 2"
    ok $? "tiny: heads / KV heads 4 / 2"
    head -c 4096 "$T/tiny.gguf" >"$T/trunc.gguf"
    expect_fail "$T/trunc.gguf" "truncated in the header"
    sz=$(wc -c <"$T/tiny.gguf" | tr -d ' ')
    head -c $((sz - 100)) "$T/tiny.gguf" >"$T/trunc2.gguf"
    expect_fail "$T/trunc2.gguf" "truncated in the data"
else
    ok 1 "ember synth tiny F16: $(cat "$T/err")"
fi
: >"$T/empty.gguf"
expect_fail "$T/empty.gguf" "empty file"
printf 'GGML not a gguf at all, just text padding it out to some size\n' >"$T/text.gguf"
expect_fail "$T/text.gguf" "not a GGUF file"
expect_fail "$T/does-not-exist.gguf" "missing file"
expect_fail "$T" "a directory"

M=$SHARED/fixtures/models
V=$SHARED/fixtures/tokenizers
if [ -n "$SHARED" ] && [ -d "$M" ]; then
    check "$M/llama-mini-Q4_0.gguf" 21 "F32=6 Q4_0=14 Q6_K=1"
    check "$M/llama-mini-Q4_K_M.gguf" 21 "F32=6 Q4_K=12 Q6_K=3"
    check "$M/llama-mini-Q5_K_M.gguf" 21 "F32=6 Q5_K=12 Q6_K=3"
    check "$M/llama-mini-Q6_K.gguf" 21 "F32=6 Q6_K=15"
    check "$M/llama-mini-Q8_0.gguf" 21 "F32=6 Q8_0=15"
    check "$M/llama-mini-f16.gguf" 21 "F32=6 F16=15"
    check "$M/qwen2-mini-Q4_K_M.gguf" 27 "F32=11 Q4_K=13 Q6_K=3"
    check "$M/qwen2-mini-Q8_0.gguf" 27 "F32=11 Q8_0=16"
    check "$M/qwen3-mini-f16.gguf" 24 "F32=9 F16=15"
    "$BIN" inspect --json "$M/qwen2-mini-Q8_0.gguf" >"$T/j"
    grep -q '"architecture": "qwen2"' "$T/j" && grep -q '"head_count_kv": 2,' "$T/j" &&
        grep -q '"vocab_size": 4096,' "$T/j" && grep -q '"context_length": 8192,' "$T/j"
    ok $? "qwen2-mini: architecture, KV heads, vocab, context in JSON"
    for v in llama-spm llama3-bpe qwen2-bpe; do
        "$BIN" inspect --json "$V/$v.gguf" >"$T/j" 2>"$T/err" && json_valid "$T/j" &&
            grep -q '"tensor_count": 0,' "$T/j" && grep -q '"dtypes": {}' "$T/j"
        ok $? "$v (vocab only): 0 tensors, empty dtypes, valid JSON"
    done
    "$BIN" inspect "$V/llama3-bpe.gguf" | grep -q "^vocab size: *128256$"
    ok $? "llama3-bpe: vocab size 128256 from the token list"
    head -c 100000 "$M/llama-mini-Q8_0.gguf" >"$T/t3.gguf"
    expect_fail "$T/t3.gguf" "fixture truncated inside its token list"
else
    skip "fixtures absent (no ../shared)"
fi
echo "1..$n"
[ $fails -eq 0 ]
