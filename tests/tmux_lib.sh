# Shared by the tests that drive the full-screen chat through tmux: TAP
# counters, a private tmux server, a temp dir removed on exit (kept when
# KEEP is set), and polling of the pane.  Source it after naming the test
#   name=NAME; . "${EMBER_SRCDIR:-.}/tests/tmux_lib.sh"   (dash passes no arguments to ".")
# It SKIPs the whole test when tmux or the ember binary is missing.
set -u
EMBER_BIN=${EMBER_BIN:-./ember}
SRCDIR=${EMBER_SRCDIR:-.}
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
tap_end() { echo "1..$n"; exit $fail; }

command -v tmux >/dev/null 2>&1 || skip_all "tmux is not installed"
[ -x "$EMBER_BIN" ] || skip_all "no ember binary at $EMBER_BIN"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ember-${name:-ui}.XXXXXX") || skip_all "no temp dir"
sock="ember-${name:-ui}-$$"
unset TMUX
T="tmux -u -L $sock -f /dev/null"
cleanup() { [ -n "${KEEP:-}" ] && return; $T kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
# The server outlives its sessions: a suite that ends one chat and starts
# the next would otherwise race the server's own exit when its last
# session closed ("tmux cannot start a session" under ASan in CI).
$T start-server \; set-option -g exit-empty off >/dev/null 2>&1 || skip_all "tmux cannot start a server"
mkdir -p "$tmp/state" "$tmp/config" "$tmp/cache"

# screen [SESSION]: the pane's text.
screen() { $T capture-pane -p -t "${1:-ember}" 2>/dev/null; }
# wait_for REGEX SECONDS [SESSION]: polls the pane every 0.1 s until REGEX shows.
wait_for() {
    _i=0
    while [ $_i -lt $(($2 * 10)) ]; do
        screen "${3:-ember}" | grep -Eq -- "$1" && return 0
        sleep 0.1
        _i=$((_i + 1))
    done
    return 1
}
# wait_gone REGEX SECONDS [SESSION]: polls the pane until REGEX no longer shows.
wait_gone() {
    _i=0
    while [ $_i -lt $(($2 * 10)) ]; do
        screen "${3:-ember}" | grep -Eq -- "$1" || return 0
        sleep 0.1
        _i=$((_i + 1))
    done
    return 1
}
# synth_tiny: a tiny random model at $tmp/tiny.gguf (SKIPs all without it).
synth_tiny() {
    "$EMBER_BIN" synth -o "$tmp/tiny.gguf" --like tiny -q >/dev/null 2>&1 ||
        skip_all "ember synth --like tiny is unavailable"
}
