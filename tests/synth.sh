#!/bin/sh
# ember synth: layouts and dtype mixes per --dtype, determinism (seed,
# thread count), --vocab grafting, and refusals that leave no file behind.
set -u
BIN=${EMBER_BIN:-./ember}
SHARED=${EMBER_SHARED:-}
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }

if [ ! -x "$BIN" ]; then echo "1..0 # SKIP $BIN not built"; exit 0; fi
T=$(mktemp -d "${TMPDIR:-/tmp}/ember-synth.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
dtype_count() { grep -A1 "^    \"$2\": {" "$1" | sed -n 's/.*"count": \([0-9]*\).*/\1/p'; }

# dtype mixes follow the reference's rules (Q4_K_M: Q6_K for output.weight
# and for attn_v / ffn_down of the last layer of two; tiny is untied)
# (Q2_K: attn_v (GQA 2), attn_output, ffn_down Q3_K; Q3_K_M: attn_v Q5_K
# in the first two layers, attn_output and ffn_down Q4_K)
for spec in "F16:F32=6 F16=16:1" "Q8_0:F32=6 Q8_0=16:7" "Q4_K_M:F32=6 Q4_K=13 Q6_K=3:15" "Q6_K:F32=6 Q6_K=16:18" \
            "Q4_0:F32=6 Q4_0=15 Q6_K=1:2" "Q5_K_M:F32=6 Q5_K=13 Q6_K=3:17" "Q2_K:F32=6 Q2_K=9 Q3_K=6 Q6_K=1:10" \
            "Q3_K_M:F32=6 Q3_K=9 Q4_K=4 Q5_K=2 Q6_K=1:12"; do
    dt=${spec%%:*} rest=${spec#*:}
    want=${rest%:*} ftype=${rest##*:}
    if ! "$BIN" synth -q -o "$T/m-$dt.gguf" --like tiny --dtype "$dt" 2>"$T/err"; then
        ok 1 "synth tiny $dt: $(head -c 200 "$T/err")"
        continue
    fi
    "$BIN" inspect --json "$T/m-$dt.gguf" >"$T/j" 2>"$T/err"
    good=$?
    for d in $want; do [ "$(dtype_count "$T/j" "${d%%=*}")" = "${d#*=}" ] || good=1; done
    grep -q "\"file_type\": $ftype," "$T/j" || good=1
    ok $good "tiny $dt: dtypes $want, general.file_type $ftype"
done

if [ -f "$T/m-Q4_K_M.gguf" ]; then
    "$BIN" inspect --tensors "$T/m-Q4_K_M.gguf" >"$T/t"
    grep -q "^  output.weight *Q6_K *256 x " "$T/t" && grep -q "^  token_embd.weight *Q4_K " "$T/t" &&
        grep -q "^  blk.1.attn_v.weight *Q6_K " "$T/t" && grep -q "^  blk.1.ffn_down.weight *Q6_K " "$T/t" &&
        grep -q "^  blk.0.ffn_down.weight *Q4_K " "$T/t" && grep -q "^  blk.0.attn_v.weight *Q4_K " "$T/t" &&
        grep -q "^  rope_freqs.weight *F32 *32 " "$T/t"
    ok $? "Q4_K_M: Q6_K on output.weight and blk.1 attn_v/ffn_down, Q4_K elsewhere, rope_freqs F32 [32]"
fi

# rows that are not whole super-blocks take the reference's fallbacks
for spec in "Q5_K_M:F32=11 Q5_1=13 Q8_0=3" "Q3_K_M:F32=11 IQ4_NL=9 Q5_1=2 Q5_0=4 Q8_0=1" \
            "Q2_K:F32=11 IQ4_NL=15 Q8_0=1" "Q4_K_M:F32=11 Q5_0=13 Q8_0=3"; do
    dt=${spec%%:*} want=${spec#*:}
    if ! "$BIN" synth -q -o "$T/q-$dt.gguf" --like tiny-qwen2 --dtype "$dt" 2>"$T/err"; then
        ok 1 "synth tiny-qwen2 $dt: $(head -c 200 "$T/err")"
        continue
    fi
    "$BIN" inspect --json "$T/q-$dt.gguf" >"$T/j" 2>"$T/err"
    good=$?
    for d in $want; do [ "$(dtype_count "$T/j" "${d%%=*}")" = "${d#*=}" ] || good=1; done
    ok $good "tiny-qwen2 $dt: dtypes $want"
done

"$BIN" inspect --json "$T/m-Q8_0.gguf" >"$T/j" 2>/dev/null
grep -q '"architecture": "llama",' "$T/j" && grep -q '"embedding_length": 256,' "$T/j" &&
    grep -q '"block_count": 2,' "$T/j" && grep -q '"head_count": 4,' "$T/j" &&
    grep -q '"head_count_kv": 2,' "$T/j" && grep -q '"tokenizer_model": "gpt2",' "$T/j" &&
    grep -q '"tokenizer_pre": "llama-bpe",' "$T/j"
ok $? "tiny: llama, 256 embd, 2 layers, 4/2 heads, gpt2 / llama-bpe tokenizer"
"$BIN" inspect --meta "$T/m-Q8_0.gguf" >"$T/m"
for k in llama.rope.freq_base llama.attention.layer_norm_rms_epsilon llama.rope.dimension_count \
         llama.feed_forward_length llama.context_length llama.vocab_size tokenizer.ggml.merges \
         tokenizer.ggml.token_type tokenizer.ggml.bos_token_id tokenizer.ggml.eos_token_id \
         tokenizer.ggml.eot_token_id tokenizer.chat_template general.quantization_version; do
    grep -q "^  $k " "$T/m" || { echo "# missing key $k"; false; } || break
done
ok $? "tiny: the metadata keys a llama loader needs are present"

"$BIN" synth -q -o "$T/a.gguf" --like tiny --dtype Q4_K_M --seed 7 --threads 1 &&
    "$BIN" synth -q -o "$T/b.gguf" --like tiny --dtype Q4_K_M --seed 7 --threads 2 &&
    cmp -s "$T/a.gguf" "$T/b.gguf"
ok $? "same seed: identical files with 1 and 2 threads"
"$BIN" synth -q -o "$T/c.gguf" --like tiny --dtype Q4_K_M --seed 8 && ! cmp -s "$T/a.gguf" "$T/c.gguf" &&
    [ "$(wc -c <"$T/a.gguf")" -eq "$(wc -c <"$T/c.gguf")" ]
ok $? "another seed: different weights, same size"

"$BIN" synth -q -o "$T/x.gguf" --like gpt-5 2>"$T/err"
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ] && [ ! -e "$T/x.gguf" ] && grep -q "gpt-5" "$T/err"
ok $? "unknown shape: error naming it, no file ($(head -c 120 "$T/err"))"
# every shape the error lists is in --help and in the man page
known=$(sed -n 's/.*(known: \(.*\))$/\1/p' "$T/err" | tr -d ',')
missing=""
for s in $known; do
    "$BIN" synth --help 2>&1 | grep -qw -- "$s" || missing="$missing help:$s"
    sed 's/\\-/-/g' "${EMBER_SRCDIR:-.}/man/ember.1" | grep -q -- "^\.B $s\$" || missing="$missing man:$s"
done
[ -n "$known" ] && [ -z "$missing" ]
ok $? "every shape synth knows is in its --help and in ember(1) (missing:${missing:- none})"
"$BIN" synth -q -o "$T/x.gguf" --like tiny --dtype Q3_K 2>"$T/err"
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ] && [ ! -e "$T/x.gguf" ]
ok $? "unknown dtype: error, no file"
"$BIN" synth -q -o "$T/x.gguf" --like tiny --vocab "$T/nope.gguf" 2>"$T/err"
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ] && [ ! -e "$T/x.gguf" ] && [ "$(ls "$T" | grep -c tmp)" -eq 0 ]
ok $? "missing --vocab file: error, no file and no temporary left"
"$BIN" synth --like tiny >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "missing -o: usage error (exit 2)"
# a binary --chat-template was cut at its first NUL and written; a directory was "read error"
"$BIN" synth -q -o "$T/ct.gguf" --like tiny --chat-template "$T/a.gguf" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && [ ! -e "$T/ct.gguf" ] && grep -q "the chat template '$T/a.gguf' is not text" "$T/err"
ok $? "a binary --chat-template is refused, no file (rc $rc: $(cat "$T/err"))"
"$BIN" synth -q -o "$T/ct.gguf" --like tiny --chat-template "$T" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -qx "ember synth: cannot read the chat template '$T': Is a directory" "$T/err"
ok $? "a directory as --chat-template says so (rc $rc: $(cat "$T/err"))"

# --untied: a tied shape gains its own output.weight (and runs); gemma-4
# shapes, which have none, refuse it and leave no file
"$BIN" synth -q -o "$T/g3.gguf" --like tiny-gemma3 && "$BIN" synth -q -o "$T/g3u.gguf" --like tiny-gemma3 --untied &&
    ! "$BIN" inspect --tensors "$T/g3.gguf" | grep -q '^  output.weight ' &&
    "$BIN" inspect --tensors "$T/g3u.gguf" | grep -q '^  output.weight *Q8_0 *256 x ' &&
    "$BIN" run -m "$T/g3u.gguf" -p hi -n 2 >/dev/null 2>&1
ok $? "--untied: tiny-gemma3 gets output.weight (tied without it) and runs"
"$BIN" synth -q -o "$T/g4u.gguf" --like tiny-gemma4 --untied 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && [ ! -e "$T/g4u.gguf" ] && grep -q 'no separate output projection' "$T/err"
ok $? "--untied on a gemma-4 shape: refused, no file"

V=$SHARED/fixtures/tokenizers/llama-spm.gguf
# a mixture of experts: 3-D expert tensors in the file's mix (the last
# layer's ffn_down_exps Q6_K, as ffn_down), the router F32, and inspect's
# expert line and keys, which a dense file does not get
if "$BIN" synth -q -o "$T/moe.gguf" --like tiny-qwen3moe --dtype Q4_K_M 2>"$T/err"; then
    "$BIN" inspect --tensors "$T/moe.gguf" >"$T/t" 2>&1
    grep -q "^  blk.0.ffn_gate_exps.weight *Q4_K *256 x 256 x 8 " "$T/t" &&
        grep -q "^  blk.1.ffn_down_exps.weight *Q6_K *256 x 256 x 8 " "$T/t" &&
        grep -q "^  blk.1.ffn_gate_inp.weight *F32 *256 x 8 " "$T/t" && ! grep -q "ffn_gate.weight\|ffn_down.weight" "$T/t"
    ok $? "tiny-qwen3moe Q4_K_M: experts as 3-D tensors in the Q4_K_M mix, F32 router, no dense FFN"
    "$BIN" inspect "$T/moe.gguf" 2>&1 | grep -q "^experts: *8, 2 a token, FFN 256 each$"
    ok $? "inspect names a mixture's experts"
    "$BIN" inspect --json "$T/moe.gguf" >"$T/j" 2>&1
    grep -q '"expert_count": 8,' "$T/j" && grep -q '"expert_used_count": 2,' "$T/j" &&
        ! "$BIN" inspect --json "$T/m-Q8_0.gguf" 2>&1 | grep -q expert && ! "$BIN" inspect "$T/m-Q8_0.gguf" 2>&1 | grep -q "^experts:"
    ok $? "inspect --json: expert_count and expert_used_count for the mixture, nothing for a dense file"
    "$BIN" run -m "$T/moe.gguf" -p "hello" -n 4 >"$T/out" 2>"$T/err"
    ok $? "run generates from the mixture ($(head -c 200 "$T/err" | tr '\n' ' '))"
else
    ok 1 "synth tiny-qwen3moe: $(head -c 200 "$T/err")"
fi

if [ -n "$SHARED" ] && [ -f "$V" ]; then
    "$BIN" synth -q -o "$T/v.gguf" --like tiny --vocab "$V" --dtype Q8_0 &&
        "$BIN" inspect --json --tensors "$T/v.gguf" >"$T/j" &&
        grep -q '"vocab_size": 32000,' "$T/j" && grep -q '"tokenizer_model": "llama",' "$T/j" &&
        grep -A6 '"name": "token_embd.weight"' "$T/j" | tr -d ' \n' | grep -q '"shape":\[256,32000\]'
    ok $? "--vocab llama-spm: 32000 tokens, SentencePiece tokenizer, token_embd 256 x 32000"
    "$BIN" inspect --meta "$T/v.gguf" >"$T/m"
    grep -q "^  tokenizer.ggml.scores (array) = \[f32 x 32000\]" "$T/m" &&
        grep -q "^  tokenizer.ggml.unknown_token_id (u32) = 0" "$T/m"
    ok $? "--vocab copies every tokenizer.* key (scores, unknown_token_id)"
else
    skip "fixtures absent (no ../shared)"
fi
echo "1..$n"
[ $fails -eq 0 ]
