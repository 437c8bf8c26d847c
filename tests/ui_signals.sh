#!/bin/sh
# The terminal is given back on every way out of the full-screen chat:
# the model file or the pack cache file truncated while mapped (SIGBUS),
# SIGSEGV / SIGTERM sent
# from outside (also while the pack cache file is written), Ctrl-Z and fg.  Driven through tmux; TAP; SKIP without
# tmux or the synth model.
name=sig; . "${EMBER_SRCDIR:-.}/tests/tmux_lib.sh"
synth_tiny

# run.sh NAME: runs the chat on NAME.gguf, then records its exit status and
# the terminal modes it left behind.
cat > "$tmp/run.sh" <<EOF2
#!/bin/sh
export LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
export XDG_CACHE_HOME=\${CACHE_DIR:-$tmp/cache} EMBER_PROFILE_DIR=$SRCDIR/profiles TERM=screen
stty -a > "$tmp/\$1.stty-before"
# (a background job's stdin would be /dev/null: the pid is written by the
# process that then becomes the chat)
sh -c 'echo \$\$ > "\$0.pid"; exec "$EMBER_BIN" -m "\$0.gguf" --strategy "\$1" --threads 1 -n 24 2> "\$0.err"' "$tmp/\$1" "\${2:-compressed}"
echo \$? > "$tmp/\$1.rc"
stty -a > "$tmp/\$1.stty-after"
sleep 30
EOF2
chmod +x "$tmp/run.sh"

wait_file() {  # wait_file PATH SECONDS
    i=0
    while [ $i -lt $(($2 * 10)) ]; do
        [ -s "$1" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
# The modes a shell needs: echo, canonical input, signals from keys.
modes_ok() {
    for m in echo icanon isig; do
        grep -Eq "(^| )$m( |$|;)" "$tmp/$1.stty-after" || return 1
    done
    return 0
}

start() {   # start NAME: a session running the chat on a copy of the model
    cp "$tmp/tiny.gguf" "$tmp/$1.gguf"
    $T new-session -d -s "$1" -x 120 -y 30 "$tmp/run.sh $1" || skip_all "tmux cannot start a session"
    wait_for 'compressed .*RSS' 20 "$1"
}

# 1. The model file truncated under the running chat: the next turn reads
#    pages that are gone (SIGBUS on the mapping).
start bus
ok $? "chat started on a copy of the model"
: > "$tmp/bus.gguf"
$T send-keys -t bus 'hello there' Enter
wait_file "$tmp/bus.rc" 20
rc=$(cat "$tmp/bus.rc" 2>/dev/null)
echo "# exit status after truncation: $rc"
[ "$rc" = 135 ]; ok $? "truncated model: exit status 128+SIGBUS"
grep -q 'model file changed on disk' "$tmp/bus.err"; ok $? "truncated model: says the file changed on disk"
modes_ok bus; ok $? "truncated model: echo, icanon, isig back"
# (tmux may draw the last bytes a moment after the exit status is written)
gone=1
for i in $(seq 50); do
    screen bus | grep -q 'RSS' || { gone=0; break; }
    sleep 0.1
done
ok $gone "truncated model: the alternate screen is left"

# 2. SIGSEGV from outside: the terminal comes back, the default action runs.
start segv
kill -SEGV "$(cat "$tmp/segv.pid")"
wait_file "$tmp/segv.rc" 20
rc=$(cat "$tmp/segv.rc" 2>/dev/null)
[ "$rc" = 139 ]; ok $? "SIGSEGV: killed by the signal (status $rc)"
modes_ok segv; ok $? "SIGSEGV: terminal modes restored"

# 3. SIGTERM: a clean exit with 128+15.
start term
kill -TERM "$(cat "$tmp/term.pid")"
wait_file "$tmp/term.rc" 20
rc=$(cat "$tmp/term.rc" 2>/dev/null)
[ "$rc" = 143 ]; ok $? "SIGTERM: exit status 143 (got $rc)"
modes_ok term; ok $? "SIGTERM: terminal modes restored"

# 5. The pack cache file truncated under a chat whose packed tiles are its
#    pages: SIGBUS on that mapping, named as the pack cache's.
cp "$tmp/tiny.gguf" "$tmp/pcache.gguf"
XDG_CACHE_HOME=$tmp/cache "$EMBER_BIN" run -m "$tmp/pcache.gguf" --strategy packed -p hi -n 1 -t 1 >/dev/null 2>&1
pc=$(ls "$tmp"/cache/ember/packed/*.pack 2>/dev/null | head -n 1)
if [ -n "$pc" ]; then
    $T new-session -d -s pcache -x 200 -y 30 "$tmp/run.sh pcache packed" || skip_all "tmux cannot start a session"
    wait_for 'tiles file-backed' 20 pcache
    ok $? "chat on the pack cache: the status bar says the tiles are file-backed"
    : > "$pc"
    $T send-keys -t pcache 'hello there' Enter
    wait_file "$tmp/pcache.rc" 20
    rc=$(cat "$tmp/pcache.rc" 2>/dev/null)
    [ "$rc" = 135 ]; ok $? "truncated pack cache: exit status 128+SIGBUS (got $rc)"
    grep -q 'pack cache file changed on disk' "$tmp/pcache.err"
    ok $? "truncated pack cache: says the pack cache file changed ($(cat "$tmp/pcache.err" | tail -n 1))"
    modes_ok pcache; ok $? "truncated pack cache: terminal modes restored"
else
    for i in 1 2 3 4; do n=$((n + 1)); echo "ok $n # SKIP no pack cache file (no packed kernel here)"; done
fi

# 6. SIGTERM while the pack cache file is being written in the background
#    (held by the test-only EMBER_TEST_PACK_WRITE_DELAY_MS): a clean exit
#    at once, the terminal back, no temporary left and no file renamed.
if [ -n "$pc" ]; then
    cp "$tmp/tiny.gguf" "$tmp/pwrite.gguf"
    mkdir -p "$tmp/wcache"
    $T new-session -d -s pwrite -x 200 -y 30 \
        "env CACHE_DIR=$tmp/wcache EMBER_TEST_PACK_WRITE_DELAY_MS=30000 $tmp/run.sh pwrite packed" ||
        skip_all "tmux cannot start a session"
    i=0
    while [ $i -lt 200 ] && ! ls -a "$tmp/wcache/ember/packed" 2>/dev/null | grep -q '\.tmp\.'; do sleep 0.1; i=$((i + 1)); done
    ls -a "$tmp/wcache/ember/packed" 2>/dev/null | grep -q '\.tmp\.'
    ok $? "packed chat on an empty cache: the file is being written (a temporary there)"
    kill -TERM "$(cat "$tmp/pwrite.pid")"
    wait_file "$tmp/pwrite.rc" 5
    rc=$(cat "$tmp/pwrite.rc" 2>/dev/null)
    [ "$rc" = 143 ]; ok $? "SIGTERM mid-write: exit status 143 within 5 s (got $rc)"
    modes_ok pwrite; ok $? "SIGTERM mid-write: terminal modes restored"
    left=$(ls -a "$tmp/wcache/ember/packed" 2>/dev/null | grep -c '\.tmp\.\|\.pack$')
    [ "$left" = 0 ]; ok $? "SIGTERM mid-write: no temporary and no cache file left ($left)"
else
    for i in 1 2 3 4; do n=$((n + 1)); echo "ok $n # SKIP no pack cache file (no packed kernel here)"; done
fi

# 4. Ctrl-Z in a shell with job control, then fg.
cp "$tmp/tiny.gguf" "$tmp/tstp.gguf"
if command -v bash >/dev/null 2>&1; then
    $T new-session -d -s tstp -x 120 -y 30 "env PS1='sh$ ' bash --norc --noprofile -i" || skip_all "no session"
    sleep 0.5
    $T send-keys -t tstp "XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config XDG_CACHE_HOME=$tmp/cache EMBER_PROFILE_DIR=$SRCDIR/profiles TERM=screen $EMBER_BIN -m $tmp/tstp.gguf --strategy compressed --threads 1 -n 8" Enter
    wait_for 'compressed .*RSS' 20 tstp
    ok $? "chat started from an interactive shell"
    $T send-keys -t tstp C-z
    wait_for 'Stopped' 10 tstp
    ok $? "Ctrl-Z stops the chat and the shell says so"
    $T send-keys -t tstp 'stty -a > '"$tmp/tstp.stty-after" Enter
    wait_file "$tmp/tstp.stty-after" 10
    modes_ok tstp; ok $? "Ctrl-Z: the shell gets its terminal modes back"
    $T send-keys -t tstp 'fg' Enter
    wait_for 'compressed .*RSS' 10 tstp
    ok $? "fg redraws the chat"
    $T send-keys -t tstp '/quit' Enter
    wait_for '^sh\$ *$' 10 tstp
    ok $? "/quit after fg returns to the shell"
else
    n=$((n + 5)); for i in 1 2 3 4 5; do echo "ok $((n - 5 + i)) # SKIP bash not installed"; done
fi
tap_end
