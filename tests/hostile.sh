#!/bin/sh
# Hostile input: every file Ember writes against a full device, a full
# filesystem, a file size limit and planted symlinks; standard output to
# /dev/full and a closed pipe; relative XDG variables; a corrupt demo cache;
# a FIFO and a device given as the model; an overlong line in plain mode;
# models whose metadata disagree with themselves.  TAP output.
set -u
EMBER_BIN=${EMBER_BIN:-./ember}
SRCDIR=${EMBER_SRCDIR:-.}
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
# says what happened when a check fails
show() { echo "# rc=$1; stderr: $(head -c 300 "$2" | tr '\n' ' ')"; }

[ -x "$EMBER_BIN" ] || { echo "1..0 # SKIP no ember binary at $EMBER_BIN"; exit 0; }
case $EMBER_BIN in /*) ;; *) EMBER_BIN=$(pwd)/$EMBER_BIN ;; esac
SRCDIR=$(cd "$SRCDIR" && pwd)   # some cases run from another directory
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ember-hostile.XXXXXX") || { echo "1..0 # SKIP no temp dir"; exit 0; }
mounted=""
cleanup() { [ -n "$mounted" ] && umount "$mounted" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
export XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache"
export HOME="$tmp/home" EMBER_PROFILE_DIR="$SRCDIR/profiles" LC_ALL=C.UTF-8
unset EMBER_FAKE_ENGINE
mkdir -p "$HOME"
E=$EMBER_BIN
T="timeout 120"   # a regression that hangs fails instead of stopping make check

if ! $T "$E" synth -o "$tmp/tiny.gguf" --like tiny -q >/dev/null 2>&1; then
    echo "1..0 # SKIP ember synth --like tiny unavailable"
    exit 0
fi
M=$tmp/tiny.gguf
printf '1 2 3 4 5 6\n' > "$tmp/ids"
ENOSPC="No space left on device"
# Writes go to a link to /dev/full, never to /dev/full itself: a regression
# that renames a temporary over its target (as root) replaces the link, not
# the system's device.
[ -c /dev/full ] && ln -s /dev/full "$tmp/full-dev"
FULL=$tmp/full-dev

# ---- writes ---------------------------------------------------------------
$T "$E" eval -m "$M" --ids "$tmp/ids" --logits "$FULL" 2> "$tmp/e"; r=$?
[ $r -ne 0 ] && grep -qx "ember: cannot write $FULL: $ENOSPC" "$tmp/e"; ok $? "eval --logits to /dev/full: non-zero, 'ember: cannot write PATH: $ENOSPC'" || show $r "$tmp/e"
[ -L "$FULL" ]; ok $? "the link to /dev/full was written through, not replaced"

echo precious > "$tmp/victim"
ln -s "$tmp/victim" "$tmp/out.bin.tmp"
$T "$E" eval -m "$M" --ids "$tmp/ids" --logits "$tmp/out.bin" 2> "$tmp/e"; r=$?
[ $r -eq 0 ] && [ "$(cat "$tmp/victim")" = precious ]; ok $? "eval --logits: a symlink planted at OUT.tmp is not followed" || show $r "$tmp/e"
[ -s "$tmp/out.bin" ] && [ ! -L "$tmp/out.bin" ]; ok $? "eval --logits wrote OUT"
rm -f "$tmp/out.bin" "$tmp/out.bin.tmp"
echo precious > "$tmp/victim2"   # each case its own victim: one overwritten stays out of the next
ln -s "$tmp/victim2" "$tmp/out.bin"
$T "$E" eval -m "$M" --ids "$tmp/ids" --logits "$tmp/out.bin" 2> "$tmp/e"; r=$?
[ $r -eq 0 ] && [ "$(cat "$tmp/victim2")" = precious ] && [ -f "$tmp/out.bin" ] && [ ! -L "$tmp/out.bin" ]
ok $? "eval --logits over a symlink replaces the link, not its target" || show $r "$tmp/e"

# a file size limit stands in for a full disk everywhere
echo "good old logits" > "$tmp/keep.bin"
(ulimit -f 4; exec $T "$E" eval -m "$M" --ids "$tmp/ids" --logits "$tmp/keep.bin") 2> "$tmp/e"; r=$?
[ $r -ne 0 ] && grep -q "^ember: cannot write $tmp/keep.bin: " "$tmp/e"; ok $? "eval --logits past a file size limit: non-zero with the message" || show $r "$tmp/e"
[ "$(cat "$tmp/keep.bin")" = "good old logits" ]; ok $? "the old file keeps its content"
[ -z "$(ls "$tmp" | grep 'keep.bin.tmp')" ]; ok $? "no temporary left behind"

# a really full filesystem, where a small tmpfs can be mounted (root)
mkdir -p "$tmp/full"
if mount -t tmpfs -o size=256k tmpfs "$tmp/full" 2>/dev/null; then
    mounted=$tmp/full
    echo "good old logits" > "$tmp/full/out.bin"
    dd if=/dev/zero of="$tmp/full/filler" bs=4k 2>/dev/null
    $T "$E" eval -m "$M" --ids "$tmp/ids" --logits "$tmp/full/out.bin" 2> "$tmp/e"; r=$?
    [ $r -ne 0 ] && grep -qx "ember: cannot write $tmp/full/out.bin: $ENOSPC" "$tmp/e"; ok $? "eval --logits on a full filesystem: non-zero, ENOSPC named" || show $r "$tmp/e"
    [ "$(cat "$tmp/full/out.bin")" = "good old logits" ]; ok $? "full filesystem: the old file keeps its content"
    [ "$(ls "$tmp/full" | wc -l)" -eq 2 ]; ok $? "full filesystem: no temporary left behind"
    $T "$E" synth -o "$tmp/full/m.gguf" --like tiny -q 2> "$tmp/e"; r=$?
    [ $r -ne 0 ] && grep -q "^ember: cannot write $tmp/full/m.gguf: $ENOSPC" "$tmp/e" && [ ! -e "$tmp/full/m.gguf" ]
    ok $? "synth -o on a full filesystem: non-zero, message, no file" || show $r "$tmp/e"
    umount "$tmp/full" && mounted=""
else
    for i in 1 2 3 4; do skip "cannot mount a tmpfs here"; done
fi

$T "$E" synth -o "$FULL" --like tiny -q 2> "$tmp/e"; r=$?
[ $r -ne 0 ] && grep -q "^ember: cannot write $FULL: $ENOSPC" "$tmp/e"; ok $? "synth -o to /dev/full: non-zero with the message" || show $r "$tmp/e"
echo precious > "$tmp/victim3"
ln -s "$tmp/victim3" "$tmp/link.gguf"
$T "$E" synth -o "$tmp/link.gguf" --like tiny -q 2> "$tmp/e"; r=$?
[ $r -eq 0 ] && [ "$(cat "$tmp/victim3")" = precious ] && [ ! -L "$tmp/link.gguf" ]; ok $? "synth -o over a symlink replaces the link" || show $r "$tmp/e"

B="-p 4 -n 2 -r 1 -w 0 -t 1 --strategy compressed"
$T "$E" bench -m "$M" $B --json "$FULL" > /dev/null 2> "$tmp/e"; r=$?
[ $r -ne 0 ] && grep -q "^ember: cannot write $FULL: $ENOSPC" "$tmp/e"; ok $? "bench --json to /dev/full: non-zero with the message" || show $r "$tmp/e"
$T "$E" bench -m "$M" $B --json "$tmp/no/such/dir.json" > /dev/null 2> "$tmp/e"; r=$?
[ $r -ne 0 ] && grep -q "^ember: cannot write $tmp/no/such/dir.json: " "$tmp/e"; ok $? "bench --json into a missing directory: non-zero with the message" || show $r "$tmp/e"

# ---- standard output --------------------------------------------------------
R="-m $M -p hello -n 4 --temp 0 -t 1"
$T "$E" run $R > /dev/full 2> "$tmp/e"; r=$?
[ $r -ne 0 ] && grep -q "cannot write standard output: $ENOSPC" "$tmp/e"; ok $? "run > /dev/full: non-zero with a message" || show $r "$tmp/e"
$T "$E" run $R --json > /dev/full 2> "$tmp/e"; r=$?
[ $r -ne 0 ] && grep -q "cannot write standard output" "$tmp/e"; ok $? "run --json > /dev/full: non-zero with a message" || show $r "$tmp/e"
$T "$E" inspect "$M" > /dev/full 2> "$tmp/e"; r=$?
[ $r -ne 0 ] && grep -q "cannot write standard output" "$tmp/e"; ok $? "inspect > /dev/full: non-zero with a message" || show $r "$tmp/e"
echo hello | $T "$E" -m "$M" -n 4 --temp 0 -t 1 > /dev/full 2> "$tmp/e"; r=$?
[ $r -ne 0 ] && grep -q "cannot write standard output" "$tmp/e"; ok $? "plain-mode chat > /dev/full: non-zero with a message" || show $r "$tmp/e"
if command -v python3 >/dev/null 2>&1; then
    # the reading end closed before ember starts: no race with the reader
    r=$(python3 -c '
import os, subprocess, sys
rd, wr = os.pipe()
os.close(rd)
print(subprocess.run(sys.argv[1:], stdout=wr, stderr=subprocess.DEVNULL, timeout=120).returncode)' "$E" inspect --tensors "$M")
    [ "$r" != 0 ]; ok $? "inspect into a closed pipe: non-zero (status $r)"
else
    skip "no python3"
fi

# ---- XDG and the demo cache -------------------------------------------------
mkdir -p "$tmp/cwd"
(cd "$tmp/cwd" && echo hi | XDG_CACHE_HOME=relcache $T "$E" --demo -n 2 -t 1 > /dev/null 2> "$tmp/e"); r=$?
[ $r -eq 0 ] && [ -s "$HOME/.cache/ember/demo-tiny.gguf" ] && [ ! -e "$tmp/cwd/relcache" ]
ok $? "relative XDG_CACHE_HOME is ignored: the demo goes to ~/.cache/ember" || show $r "$tmp/e"
mkdir -p "$tmp/cwd/relcfg/ember/profiles"
cp "$SRCDIR/profiles/eager.yaml" "$tmp/cwd/relcfg/ember/profiles/zz-relative.yaml"
(cd "$tmp/cwd" && XDG_CONFIG_HOME=relcfg $T "$E" profiles > "$tmp/o" 2>&1); r=$?
[ $r -eq 0 ] && ! grep -q zz-relative "$tmp/o"; ok $? "relative XDG_CONFIG_HOME is ignored by the profile lookup"
mkdir -p "$XDG_CACHE_HOME/ember"
head -c 5000 /dev/urandom > "$XDG_CACHE_HOME/ember/demo-tiny.gguf"
echo hi | $T "$E" --demo -n 2 -t 1 > /dev/null 2> "$tmp/e"; r=$?
[ $r -eq 0 ] && grep -q 'damaged' "$tmp/e"; ok $? "a corrupt demo cache is synthesized again" || show $r "$tmp/e"
echo hi | $T "$E" --demo -n 2 -t 1 > /dev/null 2> "$tmp/e"; r=$?
[ $r -eq 0 ] && ! grep -q 'synthesizing' "$tmp/e"; ok $? "and used from then on" || show $r "$tmp/e"

# ---- a FIFO or a device as the model ---------------------------------------
mkfifo "$tmp/fifo.gguf"
for c in "run -m $tmp/fifo.gguf -p hi -n 1" "inspect $tmp/fifo.gguf" "inspect --plan $tmp/fifo.gguf" "recache $tmp/fifo.gguf" \
         "-m $tmp/fifo.gguf" "run -m /dev/null -p hi -n 1"; do
    timeout 20 "$E" $c < /dev/null > /dev/null 2> "$tmp/e"; r=$?
    [ $r -ne 0 ] && [ $r -ne 124 ] && grep -q 'not a regular file' "$tmp/e"; ok $? "ember $c: 'not a regular file' at once" || show $r "$tmp/e"
done

# ---- plain mode: one message longer than the context -----------------------
long=$(i=0; while [ $i -lt 200 ]; do printf 'word%d ' $i; i=$((i + 1)); done)
printf '%s\nhello\n' "$long" | $T "$E" -m "$M" --ctx 64 -n 4 --temp 0 -t 1 > "$tmp/o" 2> "$tmp/e"; r=$?
[ $r -eq 1 ] && grep -q 'context' "$tmp/e"; ok $? "overlong line: the error is printed, the status is 1 at the end" || show $r "$tmp/e"
grep -q '^\[4 tokens' "$tmp/e" && [ "$(tr -d '\n' < "$tmp/o" | wc -c)" -gt 0 ]; ok $? "the next line is still answered" || show $r "$tmp/e"

# ---- metadata that disagrees with itself -----------------------------------
if command -v python3 >/dev/null 2>&1; then
    mk() { python3 "$SRCDIR/tests/hostile_gguf.py" "$M" "$tmp/$1.gguf" "$1"; }
    # refused: ids could index past the embedding, or a key contradicts the tensors
    for c in "more-tokens:token_embd.weight only" "vocab-size:vocab_size 930 differs" \
             "eos-range:eos_token_id = 1023 is outside" "pad-range:padding_token_id = 926 is outside"; do
        name=${c%%:*} want=${c#*:}
        mk "$name"
        $T "$E" run -m "$tmp/$name.gguf" -p hello -n 2 -t 1 > /dev/null 2> "$tmp/e"; r=$?
        [ $r -ne 0 ] && grep -q "$want" "$tmp/e"; ok $? "$name: run refuses with '$want'" || show $r "$tmp/e"
        $T "$E" inspect "$tmp/$name.gguf" > "$tmp/o" 2>&1; r=$?
        [ $r -eq 0 ] && grep -q "^warning: .*$want" "$tmp/o"; ok $? "$name: inspect shows it on one line" || show $r "$tmp/o"
    done
    # accepted as the reference does, with one line of warning
    for c in "fewer-tokens:have no text" "dup-token:repeats an earlier token" "dead-merge:missing from the vocabulary" \
             "dup-esc:repeats an earlier token"; do
        name=${c%%:*} want=${c#*:}
        mk "$name"
        $T "$E" run -m "$tmp/$name.gguf" -p hello -n 2 -t 1 > /dev/null 2> "$tmp/e"; r=$?
        ok $r "$name: run works" || show $r "$tmp/e"
        $T "$E" inspect "$tmp/$name.gguf" > "$tmp/o" 2>&1
        [ "$(grep -c "^warning: .*$want" "$tmp/o")" -eq 1 ]; ok $? "$name: inspect warns once"
        $T "$E" inspect --plan "$tmp/$name.gguf" > "$tmp/o" 2>&1
        [ "$(grep -c "^warning: .*$want" "$tmp/o")" -eq 1 ]; ok $? "$name: the plan warns once"
        ! grep -q "$(printf '\033')" "$tmp/o"; ok $? "$name: no escape byte of the file's text reaches the terminal"
    done
    $T "$E" inspect "$M" > "$tmp/o" 2>&1
    ! grep -q '^warning' "$tmp/o"; ok $? "a consistent model has no warnings"
else
    skip "no python3 for the metadata cases"
fi

echo "1..$n"
exit $fail
