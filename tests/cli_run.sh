#!/bin/sh
# ember run / eval on a synthetic model: determinism, strategies agree,
# eval's output format, context overflow, bad input, and the packed
# lifecycle's memory (Pss_File drops after eviction and re-eviction).
set -u
EMBER=${EMBER_BIN:-./ember}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
if ! command -v python3 >/dev/null; then echo "1..0 # SKIP python3 needed to read --json"; exit 0; fi
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# an AddressSanitizer build: its shadow memory is anonymous and faults lazily
asan=false
if grep -q __asan_init "$EMBER" 2>/dev/null; then asan=true; fi

m="$tmp/tiny.gguf"
"$EMBER" synth -o "$m" --like tiny --dtype Q8_0 --seed 7 -q
ok $? "synth writes a tiny Q8_0 model"

"$EMBER" run -m "$m" -p "hello there" -n 12 --temp 0 --json > "$tmp/a.json"
ok $? "run --json exits 0"
"$EMBER" run -m "$m" -p "hello there" -n 12 --temp 0 --json > "$tmp/b.json"
ha=$(jget "$tmp/a.json" "d['hash']"); hb=$(jget "$tmp/b.json" "d['hash']")
[ -n "$ha" ] && [ "$ha" = "$hb" ]; ok $? "greedy run twice gives the same hash ($ha)"
case "$ha" in fnv1a64:????????????????) r=0 ;; *) r=1 ;; esac; ok $r "hash is fnv1a64:%016x"
[ "$(jget "$tmp/a.json" "len(d['ids'])")" = 12 ]; ok $? "12 tokens generated"
# the hash is FNV-1a over the ids as u32 LE
hc=$(jget "$tmp/a.json" "'fnv1a64:%016x' % __import__('functools').reduce(lambda h,b: ((h ^ b) * 0x100000001b3) & (2**64-1), b''.join(i.to_bytes(4,'little') for i in d['ids']), 0xcbf29ce484222325)")
[ "$hc" = "$ha" ]; ok $? "hash recomputed from the ids matches"

# decode takes no page fault in the engine: the KV cache and scratch are
# resident from the start (lazily, this model's cache alone took 18 faults
# over 200 tokens).  The CLI's own growing output buffers may take one or
# two; a sanitizer's shadow memory faults lazily, so not under one.
"$EMBER" run -m "$m" -p "hello there" -n 200 --temp 0 --json > "$tmp/pf.json"
if $asan; then
  skip "built with AddressSanitizer: its shadow memory faults in lazily"
else
  f=$(jget "$tmp/pf.json" "d['phases']['decode']['minflt'] - d['phases']['prefill']['minflt']")
  [ "$f" -le 4 ]; ok $? "200 decoded tokens take at most the CLI's few page faults ($f)"
fi

for t in 1 2; do
  "$EMBER" run -m "$m" -p "hello there" -n 12 --temp 0 -t $t --json > "$tmp/t$t.json"
done
[ "$(jget "$tmp/t1.json" "d['hash']")" = "$(jget "$tmp/t2.json" "d['hash']")" ]; ok $? "1 and 2 threads give the same tokens"

for s in eager compressed packed; do
  "$EMBER" run -m "$m" -p "hello there" -n 12 --temp 0 --strategy $s --json > "$tmp/s-$s.json"
  ok $? "run --strategy $s"
done
[ "$(jget "$tmp/s-packed.json" "d['hash']")" = "$(jget "$tmp/s-compressed.json" "d['hash']")" ]
ok $? "packed and compressed generate the same tokens"

# text mode: stats on stderr end with the hash line
"$EMBER" run -m "$m" -p "hello there" -n 4 > "$tmp/out.txt" 2> "$tmp/err.txt"
grep -q '^hash fnv1a64:' "$tmp/err.txt" && grep -q 'TTFT' "$tmp/err.txt" && grep -q 'decode' "$tmp/err.txt"
ok $? "text mode prints TTFT, decode tok/s and the hash on stderr"

# several special tokens in one text are each one token (a splitting bug once
# shifted the fragments and produced garbage ids)
"$EMBER" tokenize -m "$m" --no-bos --special "<|start_header_id|>user<|end_header_id|>

hi<|eot_id|><|start_header_id|>assistant<|end_header_id|>" > "$tmp/tok.txt"
[ "$(grep -c '<|' "$tmp/tok.txt")" = 5 ] && ! grep -q 'header_id|>.' "$tmp/tok.txt"
ok $? "five special tokens in one text tokenize to five special ids"
"$EMBER" run -m "$m" -p "hi" --chat -n 4 > /dev/null 2>&1; ok $? "run --chat works on the llama3 template"

# eval: rows = prompt + forced, n_vocab floats each
echo "1 2 3 4 5" > "$tmp/p.ids"; echo "6 7" > "$tmp/f.ids"
"$EMBER" eval -m "$m" --ids "$tmp/p.ids" --force "$tmp/f.ids" --logits "$tmp/l.bin"
ok $? "eval exits 0"
V=$("$EMBER" inspect --json "$m" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d.get('vocab_size') or d.get('n_vocab') or 0)")
sz=$(wc -c < "$tmp/l.bin")
[ "$V" -gt 0 ] && [ "$sz" -eq $((7 * V * 4)) ]; ok $? "eval wrote 7 rows x $V floats ($sz bytes)"
"$EMBER" eval -m "$m" --ids "$tmp/p.ids" --force "$tmp/f.ids" --logits "$tmp/l2.bin" --strategy packed -t 1
cmp -s "$tmp/l.bin" "$tmp/l2.bin"; ok $? "eval: packed 1 thread == compressed 2 threads, bit for bit"
# --ctx: the session's context (what it chooses, e.g. LongRoPE's factors, follows
# it; this model has nothing of the kind); one smaller than the ids need is refused
"$EMBER" eval -m "$m" --ids "$tmp/p.ids" --force "$tmp/f.ids" --logits "$tmp/l3.bin" --ctx 64
cmp -s "$tmp/l.bin" "$tmp/l3.bin"; ok $? "eval --ctx 64: the same logits as the default context"
seq 1 20 > "$tmp/p20.ids"
"$EMBER" eval -m "$m" --ids "$tmp/p20.ids" --logits "$tmp/l4.bin" --ctx 16 2> "$tmp/e4"; r=$?
[ $r = 1 ] && grep -q -- '--ctx 16 cannot hold' "$tmp/e4" && [ ! -e "$tmp/l4.bin" ]
ok $? "eval --ctx smaller than the ids need is refused, nothing written (rc $r: $(cat "$tmp/e4"))"

# the execution plan names every tensor's representation and kernel
"$EMBER" inspect --plan "$m" > "$tmp/plan.txt"; r=$?
[ $r = 0 ] && grep -Eq '^blk\.0\.attn_q\.weight +[A-Z0-9_]+ +[0-9x]+ +compressed +[a-z0-9_]+_(scalar|avx2|avx512[a-z]*) ' "$tmp/plan.txt" &&
  grep -q '^totals: ' "$tmp/plan.txt"
ok $? "inspect --plan lists each tensor with representation and kernel, then totals"

# "--" ends the options (it was "unknown option '--'"): a FILE may start with a dash
cp "$m" "$tmp/-dash.gguf"
case $EMBER in /*) e=$EMBER ;; *) e=$PWD/$EMBER ;; esac
(cd "$tmp" && "$e" inspect --json -- -dash.gguf > /dev/null 2> "$tmp/e7"); r=$?
[ $r = 0 ]; ok $? "inspect -- -dash.gguf (rc $r: $(cat "$tmp/e7"))"
rm -f "$tmp/-dash.gguf"

# the bench: fresh processes, equal hashes, JSON with the medians
"$EMBER" bench -m "$m" -p 4 -n 4 -r 2 -w 0 -t 1 --json "$tmp/b.json" > "$tmp/b.txt" 2>&1; r=$?
[ $r = 0 ] && grep -q '^decode tok/s' "$tmp/b.txt" && grep -q 'equal across repetitions' "$tmp/b.txt" &&
  grep -q '^file pages mapped 2 MiB at a time' "$tmp/b.txt" &&
  [ "$(jget "$tmp/b.json" "int(d['decode_tps']['median'] > 0 and d['reps'] == 2 and d['hash_equal'] and 'file_pmd_kb' in d)")" = 1 ]
ok $? "bench: 2 repetitions, equal hashes, medians and FilePmdMapped in text and JSON (rc $r)"

# recache re-reads the file and leaves it as it was
cp "$m" "$tmp/before.gguf"
"$EMBER" recache "$m" > "$tmp/rc.txt"; r=$?
[ $r = 0 ] && grep -q '^mapped 2 MiB at a time: before [0-9.]* MiB, after [0-9.]* MiB' "$tmp/rc.txt" &&
  cmp -s "$m" "$tmp/before.gguf"
ok $? "recache exits 0, reports the 2 MiB mappings, leaves the file unchanged"
"$EMBER" recache "$tmp/no-such.gguf" 2> "$tmp/rc.err"; r=$?
[ $r = 1 ] && grep -q 'no-such.gguf' "$tmp/rc.err"; ok $? "recache of a missing file fails naming it (rc $r)"

# errors: exit 1 with a message, never a signal
"$EMBER" run -m "$m" -p "one two three four five six seven eight nine ten" -n 12 --ctx 16 > /dev/null 2> "$tmp/e1"
r=$?; [ $r = 1 ] && grep -q 'context' "$tmp/e1"; ok $? "context overflow is an error naming the context (rc $r)"
# a --ctx above the model's trained length (tiny: 2048) is cut to it; the error
# said "the 2048-token context" to someone who had asked for 4096
words=$(awk 'BEGIN { for (i = 0; i < 700; i++) printf "w%d ", i }')
"$EMBER" run -m "$m" -p "$words" -n 2 --ctx 4096 > /dev/null 2> "$tmp/e1"; r=$?
[ $r = 1 ] && grep -q "do not fit the 2048-token context (the model's maximum)" "$tmp/e1"
ok $? "--ctx past the model's length: the error says the context is the model's maximum (rc $r: $(cat "$tmp/e1"))"
printf 'GGUF\003\000\000\000garbage' > "$tmp/bad.gguf"
"$EMBER" run -m "$tmp/bad.gguf" -p hi > /dev/null 2> "$tmp/e2"; r=$?
[ $r = 1 ] && [ "$(wc -l < "$tmp/e2")" -ge 1 ]; ok $? "a malformed model fails cleanly (rc $r)"
echo "1 2 999999" > "$tmp/oob.ids"
"$EMBER" eval -m "$m" --ids "$tmp/oob.ids" --logits "$tmp/x.bin" 2> "$tmp/e3"; r=$?
[ $r = 1 ] && grep -q 'outside the vocabulary' "$tmp/e3"; ok $? "an out-of-range token id is an error (rc $r)"
# a prompt on stdin is a C string inside: a NUL byte cut it short, silently
printf 'he\000llo' | "$EMBER" run -m "$m" -p - -n 2 > /dev/null 2> "$tmp/e6"; r=$?
[ $r = 1 ] && grep -qx "ember run: the prompt on stdin holds a NUL byte (at byte 2)" "$tmp/e6"
ok $? "run -p - with a NUL byte is refused (rc $r: $(cat "$tmp/e6"))"
# a directory opens but does not read: said so, not taken as a file without ids
"$EMBER" eval -m "$m" --ids "$tmp/p20.ids" --force "$tmp" --logits "$tmp/x.bin" 2> "$tmp/e5"; r=$?
[ $r = 1 ] && grep -qx "ember eval: $tmp: Is a directory" "$tmp/e5" && [ ! -e "$tmp/x.bin" ]
ok $? "eval --force DIR is an error naming it (rc $r: $(cat "$tmp/e5"))"
"$EMBER" eval -m "$m" --ids "$tmp" --logits "$tmp/x.bin" 2> "$tmp/e5"; r=$?
[ $r = 1 ] && grep -qx "ember eval: $tmp: Is a directory" "$tmp/e5"
ok $? "eval --ids DIR: a directory, not 'holds no token ids' (rc $r: $(cat "$tmp/e5"))"
"$EMBER" run -m "$m" -p hi --strategy bogus > /dev/null 2>&1; r=$?
[ $r = 2 ]; ok $? "an unknown strategy is a usage error (rc $r)"

# the packed lifecycle: the sources' file pages go away after eviction
# (without the pack cache: a hit never reads the sources, so nothing is released)
"$EMBER" run -m "$m" -p "hello there" -n 4 --strategy packed --pack-cache off --json > "$tmp/pk.json"
npk=$(jget "$tmp/pk.json" "d['packed_tensors']")
# the report names what executes: nothing packed runs (and is shown) as compressed
rs=$(jget "$tmp/pk.json" "d['strategy']")
if [ "$npk" = 0 ]; then want=compressed; else want=packed; fi
[ "$rs" = "$want" ]; ok $? "packed asked, $npk tensors packed: the run reports strategy '$rs' (want $want)"
if [ "$npk" = 0 ]; then
  "$EMBER" inspect --plan --strategy packed "$m" | head -n 1 | grep -q 'nothing is packed: runs as compressed'
  ok $? "and the plan's first line says it runs as compressed"
else
  ! "$EMBER" inspect --plan --strategy packed "$m" | head -n 1 | grep -q 'nothing is packed'
  ok $? "and the plan does not claim it runs as compressed"
fi
if [ "$npk" = 0 ]; then
  reason=$("$EMBER" inspect --plan --strategy packed --tensors "$m" | grep -o 'no packed kernel on this CPU[^|]*\|EMBER_LLAMA_PACKED_Q8=0[^|]*' | head -1)
  skip "nothing was packed (${reason:-no packed kernel in this build}): no release to measure"
  skip "nothing was packed: no re-eviction to measure"
  skip "nothing was packed: no decode after re-eviction to measure"
elif [ -r /proc/self/smaps ]; then
  # the model file's own mapping (model_rss_kb, its VMAs' Rss): Pss_File
  # also holds this process's share of the binary's and libraries' pages,
  # which jumps when another process mapping them exits (parallel tests, a
  # large sanitizer runtime), and the tiny model's sources are smaller
  op=$(jget "$tmp/pk.json" "d['phases']['opened']['model_rss_kb']")
  pk=$(jget "$tmp/pk.json" "d['phases']['packed']['model_rss_kb']")
  pf=$(jget "$tmp/pk.json" "d['phases']['prefill']['model_rss_kb']")
  re=$(jget "$tmp/pk.json" "d['phases']['re-evicted']['model_rss_kb']")
  de=$(jget "$tmp/pk.json" "d['phases']['decode']['model_rss_kb']")
  # each source is released as soon as it is packed: packing leaves no more
  # of the file mapped than opening did (this model's sources are ~1 MiB)
  [ "$op" -ge 0 ] && [ "$pk" -le $((op + 512)) ]; ok $? "packing releases the sources as it goes (model pages mapped $op -> $pk kB)"
  [ "$re" -lt "$pf" ]; ok $? "the model's mapped pages drop on re-eviction after a generic prefill ($pf -> $re kB)"
  # decode touches the compressed neighbours of released ranges, which must
  # not map the released pages back (lifecycle.c, small_pages_at)
  [ "$de" -le $((re + 512)) ]; ok $? "the model's mapped pages stay down through decode ($re -> $de kB)"
else
  skip "/proc/self/smaps absent: no mapping to read"
  skip "/proc/self/smaps absent: no mapping to read"
  skip "/proc/self/smaps absent: no mapping to read"
fi
# compressed keeps a Q4_K_M file at file size: after load and a 128-token
# prefill, RSS <= file + KV cache + 64 MiB and the anonymous part stays small
if [ -r /proc/self/smaps_rollup ]; then
  q="$tmp/q4km.gguf"
  "$EMBER" synth -o "$q" --like tiny --dtype Q4_K_M --seed 3 -q
  ok $? "synth writes a tiny Q4_K_M model"
  words=$(i=0; while [ $i -lt 20 ]; do printf 'the cat sat on a mat and '; i=$((i + 1)); done)
  "$EMBER" run -m "$q" -p "$words" -n 2 --ctx 1200 --json > "$tmp/q.json"
  ok $? "run on the Q4_K_M model"
  np=$(jget "$tmp/q.json" "d['prompt_tokens']")
  [ "$np" -ge 128 ]; ok $? "the prompt is at least 128 tokens ($np)"
  file_kb=$(( $(wc -c < "$q") / 1024 ))
  # KV cache: layers x ctx x kv_dim x 2 (K, V) x 2 bytes, from inspect
  kv_kb=$("$EMBER" inspect --json "$q" | python3 -c "
import json,sys; d=json.load(sys.stdin)
L=d['block_count']; H=d['head_count']; KV=d['head_count_kv']; E=d['embedding_length']
print(int(L*1200*(E//H)*KV*2*2/1024))")
  rss=$(jget "$tmp/q.json" "d['phases']['prefill']['rss_kb']")
  anon=$(jget "$tmp/q.json" "d['phases']['prefill']['pss_anon_kb']")
  [ "$rss" -le $((file_kb + kv_kb + 65536)) ]
  ok $? "RSS after prefill $rss kB <= file $file_kb + KV $kv_kb + 65536 kB"
  [ "$anon" -le $((kv_kb + 32768)) ]
  ok $? "anonymous memory after prefill $anon kB <= KV $kv_kb + 32 MiB of workspace"
  # packed tiles cost their bytes: packing a Qwen2.5-0.5B-shaped Q8_0 file
  # (gate, up and down of 4.6 MB in each of 24 layers) adds at most the
  # plan's packed bytes + 8 MiB of anonymous memory (a 2 MiB-aligned block
  # per weight, each last huge page resident whole, held ~100 MiB more)
  p="$tmp/q05.gguf"
  "$EMBER" synth -o "$p" --like qwen2.5-0.5b --dtype Q8_0 -q &&
      "$EMBER" run -m "$p" --strategy packed --pack-cache off -p "hello" -n 1 --ctx 64 --json > "$tmp/p.json"
  ok $? "a packed run on a 0.5B-shaped Q8_0 model"
  pk_kb=$(jget "$tmp/p.json" "d['resident_bytes']['packed'] // 1024")
  if [ "${pk_kb:-0}" -gt 0 ]; then
    a0=$(jget "$tmp/p.json" "d['phases']['opened']['pss_anon_kb']")
    a1=$(jget "$tmp/p.json" "d['phases']['packed']['pss_anon_kb']")
    # under AddressSanitizer its shadow memory (a byte per 8 it tracks) is
    # anonymous too: on the Zen 5 VM packing added 296852 kB, against 237380
    # without ASan, and smaps showed the tiles' arena at exactly their size
    # and the rest in the shadow's mapping; a second copy would still fail
    slack=8192
    if $asan; then slack=$((8192 + pk_kb / 4)); fi
    [ $((a1 - a0)) -le $((pk_kb + slack)) ]
    ok $? "packing added $((a1 - a0)) kB of anonymous memory for $pk_kb kB of tiles (+ $slack kB at most)"
  else
    skip "no packed kernel here: nothing packed"
  fi
  rm -f "$p"
fi
echo "1..$n"
[ $fails = 0 ]
