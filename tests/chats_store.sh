#!/bin/sh
# The conversation store under stress: two Embers on one conversation
# (full-screen in two tmux windows, plain mode, one-shot), `ember chats rm`
# of one open elsewhere, a lock left by a process killed with -9, kill -9
# in the middle of saves, and hostile files in the chats directory.
# TAP; SKIP without tmux.
name=store; . "${EMBER_SRCDIR:-.}/tests/tmux_lib.sh"
env_line="export LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
export XDG_CACHE_HOME=$tmp/cache TERM=screen EMBER_FAKE_ENGINE=1"
eval "$env_line"
export LANG LC_ALL XDG_STATE_HOME XDG_CONFIG_HOME XDG_CACHE_HOME EMBER_FAKE_ENGINE
chats="$tmp/state/ember/chats"

# start NAME ARGS...: ember in a tmux session of its own (as ui_chats.sh)
start() {
    name=$1
    shift
    cat > "$tmp/$name.sh" <<EOF
#!/bin/sh
$env_line
${extra_env:-}
"$EMBER_BIN" $*
echo \$? > "$tmp/$name.rc"
echo "--- ember ended"
sleep 60
EOF
    chmod +x "$tmp/$name.sh"
    $T new-session -d -s "$name" -x 120 -y 30 "$tmp/$name.sh"
}
wait_until() {
    _i=0
    while [ $_i -lt 200 ]; do
        "$@" && return 0
        sleep 0.1
        _i=$((_i + 1))
    done
    return 1
}
has() { grep -q "$2" "$1" 2>/dev/null; }
n_json() { ls "$chats" 2>/dev/null | grep -c '\.json$'; }

# ---- two full-screen chats on one conversation --------------------------
printf 'base question\n' | "$EMBER_BIN" -m fake.gguf > /dev/null 2>&1
f=$(ls "$chats"/*.json 2>/dev/null | head -n 1)
id=$(basename "$f" .json)
[ -n "$f" ] || skip_all "plain mode saved no conversation"

start one -c || skip_all "tmux cannot start a session"
wait_for "reopened conversation $id" 20 one || skip_all "the chat did not start"
start two -c
wait_for "conversation $id is open in another Ember \\(pid [0-9]+\\)" 20 two
ok $? "a second ember -c of a conversation open elsewhere says so"
screen two | grep -q 'base question'
ok $? "and shows its turns, as a copy"
$T send-keys -t one 'from window one' Enter
wait_for 'You said: from window one' 10 one
$T send-keys -t two 'from window two' Enter
wait_for 'You said: from window two' 10 two
$T send-keys -t one 'one again' Enter
wait_for 'You said: one again' 10 one
wait_until has "$f" '"content": "one again"' && ! grep -q 'from window two' "$f"
ok $? "the first window's turns are all in the conversation's file, the second's are not"
g=$(grep -l '"content": "from window two"' "$chats"/*.json 2>/dev/null | head -n 1)
[ -n "$g" ] && [ "$g" != "$f" ] && grep -q '"content": "base question"' "$g" &&
    grep -q "\"forked_from\": \"$id\"" "$g" && ! grep -q 'from window one' "$g"
ok $? "the second window's turns went to a copy that starts with the shared turns ($(basename "$g"))"

"$EMBER_BIN" chats rm "$id" > /dev/null 2> "$tmp/rm.err"
[ $? = 1 ] && grep -q "conversation $id is open in another Ember (pid [0-9]*): quit it there first" "$tmp/rm.err" &&
    [ -f "$f" ]
ok $? "ember chats rm of a conversation open elsewhere refuses ($(cat "$tmp/rm.err"))"

# /load of its own conversation is no conflict with itself; /load of the
# one open elsewhere is a copy again
gid=$(basename "$g" .json)
$T send-keys -t two "/load $gid" Enter
wait_for "reopened conversation $gid" 5 two && ! screen two | grep -q "conversation $gid is open"
ok $? "/load of the conversation this process has is not a conflict"
$T send-keys -t two "/load $id" Enter
wait_for "conversation $id is open in another Ember" 5 two && wait_for 'reopened conversation' 5 two
ok $? "/load of a conversation open elsewhere continues in a copy, saying so" || screen two

$T send-keys -t one C-d
wait_for '^--- ember ended' 10 one
ok $? "the first window quits"
"$EMBER_BIN" chats rm "$id" > /dev/null 2>&1 && [ ! -e "$f" ]
ok $? "once it has quit, ember chats rm removes the conversation"
$T send-keys -t two C-d
wait_for '^--- ember ended' 10 two
[ -z "$(ls -A "$chats" | grep -v '\.json$')" ]
ok $? "no lock or temporary file is left once both have quit ($(ls -A "$chats" | tr '\n' ' '))"

# ---- plain mode and one-shot -----------------------------------------------
rm -rf "$chats"
printf 'plain base\n' | "$EMBER_BIN" -m fake.gguf > /dev/null 2>&1
pf=$(ls "$chats"/*.json | head -n 1)
pid_=$(basename "$pf" .json)
(echo A1; sleep 2; echo A2; sleep 1) | "$EMBER_BIN" -c > /dev/null 2> "$tmp/pa.err" &
apid=$!
wait_until has "$pf" '"content": "A1"'
(echo B1; echo B2) | "$EMBER_BIN" -c > /dev/null 2> "$tmp/pb.err"
"$EMBER_BIN" --resume "$pid_" -p 'one shot' > /dev/null 2> "$tmp/pc.err"
wait $apid
grep -q '"content": "A2"' "$pf" && ! grep -q '"content": "B1"' "$pf" && ! grep -q '"content": "one shot"' "$pf"
ok $? "plain mode: the turns of the ember -c that had the conversation first are all kept in it"
b=$(grep -l '"content": "B2"' "$chats"/*.json | head -n 1)
o=$(grep -l '"content": "one shot"' "$chats"/*.json | head -n 1)
[ -n "$b" ] && [ -n "$o" ] && [ "$b" != "$pf" ] && [ "$o" != "$pf" ] && [ "$b" != "$o" ] &&
    grep -q '"content": "B1"' "$b" && grep -q "is open in another Ember" "$tmp/pb.err" &&
    grep -q "is open in another Ember" "$tmp/pc.err"
ok $? "the second plain ember -c and a one-shot --resume -p each went on in a copy, saying so" || { ls $chats; cat $tmp/pb.err $tmp/pc.err; }

# a process killed with -9 leaves its lock file, but not its lock
rm -rf "$chats"
printf 'crash base\n' | "$EMBER_BIN" -m fake.gguf > /dev/null 2>&1
cf=$(ls "$chats"/*.json | head -n 1)
cid=$(basename "$cf" .json)
start victim -c
wait_for "reopened conversation $cid" 20 victim
[ -f "$chats/.$cid.lock" ]
ok $? "an open conversation has its lock file"
vpid=$(cat "$chats/.$cid.lock")
kill -9 "$vpid"
wait_until test -s "$tmp/victim.rc"
printf 'after the crash\n' | "$EMBER_BIN" -c > /dev/null 2> "$tmp/ac.err"
grep -q '"content": "after the crash"' "$cf" && ! grep -q 'open in another' "$tmp/ac.err"
ok $? "after kill -9 of the process that had it, ember -c goes on in the conversation itself"
[ "$(n_json)" = 1 ] && [ -z "$(ls -A "$chats" | grep -v '\.json$')" ]
ok $? "and the stale lock file is gone"

tap_end
