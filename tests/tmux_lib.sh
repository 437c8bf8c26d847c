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
# wait_until CMD...: polls every 0.1 s (up to 20 s) until CMD succeeds -- a
# save follows the reply's last token on screen, and under ASan beside other
# suites it can lag it by more than a fixed pause.
wait_until() {
    _i=0
    while [ $_i -lt 200 ]; do
        "$@" && return 0
        sleep 0.1
        _i=$((_i + 1))
    done
    return 1
}
# start NAME ARGS...: ember ARGS in a tmux session of its own, NAME, in the
# environment $env_line (and ${extra_env:-}) sets, ${start_width:-100}
# columns; the pane stays after ember ends (a shell would show what was
# printed there), and the exit status lands in $tmp/NAME.rc.
start() {
    name=$1
    shift
    cat > "$tmp/$name.sh" <<EOF
#!/bin/sh
${env_line:-}
${extra_env:-}
"$EMBER_BIN" $*
echo \$? > "$tmp/$name.rc"
echo "--- ember ended"
sleep 60
EOF
    chmod +x "$tmp/$name.sh"
    $T new-session -d -s "$name" -x "${start_width:-100}" -y 30 "$tmp/$name.sh"
}
# synth_tiny: a tiny random model at $tmp/tiny.gguf (SKIPs all without it).
synth_tiny() {
    "$EMBER_BIN" synth -o "$tmp/tiny.gguf" --like tiny -q >/dev/null 2>&1 ||
        skip_all "ember synth --like tiny is unavailable"
}
