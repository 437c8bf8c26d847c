#!/bin/sh
# Text from files never reaches the terminal as escape sequences: a model
# whose general.name and a tensor name carry OSC / CSI / C1 controls, and a
# file name with an escape in an error message.  TAP; the tmux part SKIPs
# without tmux.
set -u
EMBER_BIN=${EMBER_BIN:-./ember}
SRCDIR=${EMBER_SRCDIR:-.}
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
[ -x "$EMBER_BIN" ] || { echo "1..0 # SKIP no ember binary"; exit 0; }
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 is not installed"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ember-htext.XXXXXX") || exit 1
sock="ember-htext-$$"
T="tmux -u -L $sock -f /dev/null"
trap '$T kill-server >/dev/null 2>&1; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
export XDG_STATE_HOME="$tmp" XDG_CONFIG_HOME="$tmp" XDG_CACHE_HOME="$tmp" EMBER_PROFILE_DIR="$SRCDIR/profiles"

"$EMBER_BIN" synth -o "$tmp/tiny.gguf" --like tiny -q || { echo "1..0 # SKIP synth failed"; exit 0; }
# Same-length rewrites keep the file valid: general.name becomes a title
# change, a screen clear and C1 CSI (8-bit and UTF-8); a tensor name gets
# an escape too.
python3 - "$tmp/tiny.gguf" "$tmp/evil.gguf" "$tmp/evil-tensor.gguf" <<'PY' || { echo "1..0 # SKIP cannot patch the model"; exit 0; }
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
def patch_str(key, new):
    k = key.encode()
    i = b.index(struct.pack('<Q', len(k)) + k) + 8 + len(k)
    assert struct.unpack_from('<I', b, i)[0] == 8        # a string value
    n = struct.unpack_from('<Q', b, i + 4)[0]
    v = (new + b'.' * n)[:n]
    b[i + 12:i + 12 + n] = v
patch_str('general.name', b'\x1b]0;PWNED\x07\x1b[2J\x9bX\xc2\x9bZ')
open(sys.argv[2], 'wb').write(bytes(b))
t = b'output_norm.weight'
i = b.index(struct.pack('<Q', len(t)) + t) + 8
b[i:i + len(t)] = b'output\x1b[31mnorm.wt'
open(sys.argv[3], 'wb').write(bytes(b))
PY

# Bytes a terminal acts on: C0 controls but tab and newline, DEL, C1.
has_controls() { LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177\200-\237]')" "$1"; }

"$EMBER_BIN" inspect "$tmp/evil.gguf" > "$tmp/inspect.out" 2>&1
"$EMBER_BIN" inspect --tensors "$tmp/evil-tensor.gguf" >> "$tmp/inspect.out" 2>&1
grep -q 'PWNED' "$tmp/inspect.out" && grep -q 'output.\[31mnorm' "$tmp/inspect.out"
ok $? "inspect shows the hostile name and tensor name (as text)"
has_controls "$tmp/inspect.out"; [ $? != 0 ]; ok $? "inspect: no control byte reaches the terminal"

"$EMBER_BIN" run -m "$tmp/evil.gguf" -p hi -n 2 -t 1 > "$tmp/run.out" 2>&1
has_controls "$tmp/run.out"; [ $? != 0 ]; ok $? "run: no control byte in its output"

bad="$tmp/$(printf '\033]0;PWNED\007')x.gguf"
"$EMBER_BIN" inspect "$bad" > "$tmp/err.out" 2>&1
[ $? != 0 ] && grep -q 'PWNED' "$tmp/err.out"; ok $? "an error quoting a file name says so"
has_controls "$tmp/err.out"; [ $? != 0 ]; ok $? "the error message carries no escape"

if command -v tmux >/dev/null 2>&1; then
    unset TMUX
    $T new-session -d -s e -x 120 -y 30 "TERM=screen LANG=C.UTF-8 $EMBER_BIN -m $tmp/evil.gguf --strategy compressed -t 1; sleep 30" ||
        { echo "1..0 # SKIP tmux"; exit 0; }
    i=0
    while [ $i -lt 200 ] && ! $T capture-pane -p -t e | grep -q 'RSS'; do sleep 0.1; i=$((i + 1)); done
    title=$($T display-message -p -t e '#{pane_title}')
    echo "# pane title: $title"
    [ "$title" != PWNED ]; ok $? "the chat's status bar does not retitle the terminal"
    $T capture-pane -p -t e | grep -q 'PWNED'; ok $? "the chat shows the name as text"
else
    n=$((n + 2)); echo "ok $((n - 1)) # SKIP tmux"; echo "ok $n # SKIP tmux"
fi
echo "1..$n"
exit $fail
