#!/bin/sh
# End to end: quitting the chat while a first load's pack cache file is
# still being written (held back by EMBER_TEST_PACK_WRITE_DELAY_MS) says
# so on the screen instead of seeming to hang, exits 0 once it is done,
# and leaves the finished file for the next start, which maps it.  TAP;
# SKIP without tmux.
name=packui; . "${EMBER_SRCDIR:-.}/tests/tmux_lib.sh"
synth_tiny
cat > "$tmp/run.sh" <<EOF2
#!/bin/sh
export LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
export XDG_CACHE_HOME=$tmp/cache EMBER_PROFILE_DIR=$SRCDIR/profiles TERM=screen
export EMBER_TEST_PACK_WRITE_DELAY_MS=\${DELAY:-0}
"$EMBER_BIN" -m "$tmp/tiny.gguf" --profile packed --threads 1 -n 4
echo \$? > "\$0.rc"
EOF2
chmod +x "$tmp/run.sh"

$T new-session -d -s ember -x 120 -y 30 "env DELAY=6000 $tmp/run.sh" || skip_all "tmux cannot start a session"
wait_for 'RSS' 20 || skip_all "the chat did not start"
$T send-keys -t ember 'hello' Enter
wait_for 'tok/s avg' 20
ok $? "a first reply on a packed model (the pack cache is being written)"
$T send-keys -t ember '/quit' Enter
wait_for 'finishing the pack cache file' 5
ok $? "/quit while the pack cache is written says so on the screen"
[ ! -s "$tmp/run.sh.rc" ]
ok $? "and waits for it (no exit status yet)"
wait_until test -s "$tmp/run.sh.rc"
[ "$(cat "$tmp/run.sh.rc" 2>/dev/null)" = 0 ]
ok $? "then exits 0 (got '$(cat "$tmp/run.sh.rc" 2>/dev/null)')"
[ "$(ls "$tmp/cache/ember/packed" 2>/dev/null | grep -c '\.pack$')" = 1 ] &&
    [ "$(ls -a "$tmp/cache/ember/packed" 2>/dev/null | grep -c '\.tmp\.')" = 0 ]
ok $? "the finished pack cache file is there, no temporary left"

tap_end
