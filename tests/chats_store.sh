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

start_width=120   # start (tmux_lib.sh): wide enough for the fork notes
has() { grep -q "$2" "$1" 2>/dev/null; }
n_json() { ls "$chats" 2>/dev/null | grep -c '\.json$'; }
# in_some PATTERN: some regular file in the chats directory holds it (not
# through a symlink to /dev/zero or a FIFO, planted below)
in_some() {
    for _f in "$chats"/*.json; do
        [ -f "$_f" ] && [ ! -L "$_f" ] && grep -q "$1" "$_f" 2>/dev/null && return 0
    done
    return 1
}

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

# lists mark what is open elsewhere, with the holder's pid (from the
# kernel's lock table, not a probe of the lock)
hpid=$(cat "$chats/.$id.lock" 2>/dev/null)
"$EMBER_BIN" chats 2>/dev/null | grep "^$id " | grep -q "(open in pid $hpid) base question"
ok $? "ember chats marks the conversation open in window one (pid $hpid)"
"$EMBER_BIN" chats --json 2>/dev/null | tr -d ' \n' | grep -q "\"id\":\"$id\"[^}]*\"open_pid\":$hpid"
ok $? "ember chats --json gives its open_pid"
$T send-keys -t two "/chats" Enter
wait_for " $id .*\\(open in another Ember\\) base question" 5 two
ok $? "/chats in window two marks it open in another Ember" || screen two

# /load of its own conversation is no conflict with itself; /load of the
# one open elsewhere is a copy again
gid=$(basename "$g" .json)
# (each wait is for a note only this command prints: the start's notes are
# still on the screen, and a match on them let window one quit while the
# second /load was still on its way, which then found the conversation
# free and took it)
$T send-keys -t two "/load $gid" Enter
wait_for "reopened conversation $gid \\(2 turns" 5 two && ! screen two | grep -q "conversation $gid is open"
ok $? "/load of the conversation this process has is not a conflict"
reopened_copy() { screen two | grep -o 'reopened conversation [0-9a-f-]* (3 turns' | grep -qv "$gid"; }
$T send-keys -t two "/load $id" Enter
wait_until reopened_copy && screen two | grep -q "conversation $id is open in another Ember"
ok $? "/load of a conversation open elsewhere continues in a copy, saying so" || screen two

$T send-keys -t one C-d
wait_for '^--- ember ended' 10 one
ok $? "the first window quits"
! "$EMBER_BIN" chats 2>/dev/null | grep "^$id " | grep -q "(open in pid"
ok $? "... after which ember chats no longer marks it open"
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

# ---- kill -9 during saves ------------------------------------------------
# A conversation of a few MB, so that each save (write, fsync, rename) takes
# long enough for random kills to land inside some of them; after every
# kill the file must read whole (the old version or the new), and the
# temporaries a killed save leaves must neither show in lists nor stay.
rm -rf "$chats"
mkdir -p "$chats"
kid=20200101-000000-000-c0ffee
kf="$chats/$kid.json"
big=$(head -c 3000000 /dev/zero | tr '\0' x)
printf '{"version": 1, "id": "%s", "created": "2020-01-01T00:00:00Z", "model": "fake.gguf",\n' "$kid" > "$kf"
printf ' "messages": [{"role": "user", "content": "%s"}, {"role": "assistant", "content": "ok"}]}\n' "$big" >> "$kf"
unset big
turns_of() { grep -c '"role": "assistant"' "$1" 2>/dev/null; }
last=1 whole=0 bad=0 temps=0 i=0 scale=1
while [ $i -lt 30 ]; do
    i=$((i + 1))
    for k in 1 2 3 4 5 6 7 8; do echo "kill round $i turn $k"; done > "$tmp/lines"
    EMBER_FAKE_DELAY_MS=3 "$EMBER_BIN" --resume "$kid" < "$tmp/lines" > /dev/null 2>&1 &
    epid=$!
    # 50..250 ms (times scale): inside the loading, a reply or a save.  A
    # slow build (ASan beside other suites) may not get past loading the
    # 3 MB file in that: until a turn is saved, each round waits twice as
    # long (up to 16x), so the kills still land in saves and not all before
    ms=$(( ((i * 37) % 20 + 5) * 10 * scale ))
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    kill -9 $epid 2>/dev/null
    wait $epid 2>/dev/null
    ls "$chats" | grep -q '\.tmp\.' && temps=$((temps + 1))
    t=$(turns_of "$kf")
    if "$EMBER_BIN" chats 2> "$tmp/k.err" | grep -q "^$kid " && ! [ -s "$tmp/k.err" ] && [ "$t" -ge "$last" ]; then
        whole=$((whole + 1))
    else
        bad=$((bad + 1))
        cp "$kf" "$tmp/bad-$i.json" 2>/dev/null
    fi
    last=${t:-0}
    [ "$last" -le 1 ] && [ $scale -lt 16 ] && scale=$((scale * 2))
done
[ $bad = 0 ] && [ "$last" -gt 1 ]
ok $? "30 kill -9s at random moments: the file always read whole, turns never lost ($whole whole, $bad bad, $last turns, a temporary left $temps times)"
# a killed save's temporary and a dead process's lock file, planted for sure
printf '{"version": 1, "id": "%s", "cre' "$kid" > "$kf.tmp.99999.0badf00d"
echo 99999 > "$chats/.$kid.lock"
"$EMBER_BIN" chats > "$tmp/k.out" 2> "$tmp/k.err"
[ $? = 0 ] && grep -q "^$kid " "$tmp/k.out" && ! [ -s "$tmp/k.err" ] &&
    [ -z "$(ls -A "$chats" | grep -v '\.json$')" ]
ok $? "a leftover temporary and a stale lock file do not show in the list, and listing removes them"

# ---- hostile files in the chats directory -----------------------------------
rm -rf "$chats"
printf 'a good one\n' | "$EMBER_BIN" -m fake.gguf > /dev/null 2>&1
gf=$(ls "$chats"/*.json | head -n 1)
gid=$(basename "$gf" .json)
h() { echo "$chats/20200101-000000-000-$1.json"; }
echo '{"version": 1, "id": "20200101-000000-000-trunc0", "created": "2020-01-01T00:00:00Z", "mess' > "$(h trunc0)"
head -c 4096 /dev/urandom > "$(h binary)"
truncate -s 200M "$(h big200)"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; }' > "$(h nested)"
echo '{"version": 1, "id": "20200101-000000-000-types0", "created": 5, "messages": "x"}' > "$(h types0)"
echo '{"version": 1, "id": "20200101-000000-000-types1", "created": "2020-01-01T00:00:00Z", "model": [1],
  "messages": [{"role": "user", "content": "typed", "stats": "no"}, {"role": "assistant", "content": "x",
  "cancelled": "yes", "stats": {"prompt_tokens": "1", "ttft_ms": [], "generated_tokens": 1e300}}]}' > "$(h types1)"
printf '{"version": 2, "id": "20991231-000000-000-newer0", "created": "2099-12-31T00:00:00Z", "messages": [], "x": 1}\n' \
    > "$chats/20991231-000000-000-newer0.json"
newsum=$(cksum < "$chats/20991231-000000-000-newer0.json")
mkdir "$(h dir000)"
ln -s /nonexistent "$(h dangle)"
ln -s /dev/zero "$(h devzer)"
ln -s "$gf" "$(h symlnk)"
mkfifo "$(h fifo00)"
hugeid=20200101-000000-000-huge00
{ printf '{"version": 1, "id": "%s", "created": "2020-01-01T00:00:00Z", "messages": [{"role": "user", "content": "' "$hugeid"
  head -c 8000000 /dev/zero | tr '\0' y
  printf '"}, {"role": "assistant", "content": "fine"}]}\n'; } > "$chats/$hugeid.json"
unread=$(h unread)
cp "$gf" "$unread"
chmod 000 "$unread"

timeout 60 "$EMBER_BIN" chats > "$tmp/h.out" 2> "$tmp/h.err"
r=$?
[ $r = 0 ] && grep -q "^$gid " "$tmp/h.out" && grep -q "^$hugeid " "$tmp/h.out" &&
    grep -q "^20200101-000000-000-types1 .* typed" "$tmp/h.out"
ok $? "ember chats lists the good ones past every hostile file, without hanging (exit $r)"
for w in 'trunc0.json: not valid JSON' 'binary.json: not valid JSON' 'big200.json: too large (200.0 MiB' \
    'nested.json: not valid JSON' 'types0.json: no valid creation time' 'newer0.json: format version 2.*newer Ember' \
    'dir000.json: a directory' 'dangle.json: a symbolic link to nothing' 'devzer.json: a device' \
    'symlnk.json: it holds conversation' 'fifo00.json: a FIFO'; do
    grep -q "skipping .*$w" "$tmp/h.err"
    ok $? "ember chats says why it skips ${w%%:*}"
done
if [ "$(id -u)" = 0 ]; then
    skip "root reads a chmod 000 file"
else
    grep -q 'unread.json: Permission denied' "$tmp/h.err"
    ok $? "ember chats says why it skips an unreadable file"
fi

# the full-screen chat: -c, /chats and /load past them; a turn saved
start hostile -c
wait_for "reopened conversation" 20 hostile
ok $? "ember -c opens past the hostile files"
$T send-keys -t hostile '/chats' Enter
wait_for "saved conversations" 10 hostile && screen hostile | grep -q 'skipping .*20200101-000000-000-'
ok $? "/chats lists, and says what it skipped"
$T send-keys -t hostile '/load 20200101-000000-000-fifo00' Enter
wait_for '/load: no saved conversation 20200101-000000-000-fifo00' 10 hostile
ok $? "/load of a FIFO's name does not hang: no such conversation"
$T send-keys -t hostile "/load $hugeid" Enter
# (the message fills the screen: the note after it is what shows)
wait_for "the model sees it without its [0-9]+ oldest" 20 hostile
ok $? "/load of a conversation with an 8 MB message works" || screen hostile | tail -n 5
$T send-keys -t hostile '/new' Enter
sleep 0.3
$T send-keys -t hostile 'new words' Enter
wait_for 'You said: new words' 10 hostile
$T send-keys -t hostile C-d
wait_for '^--- ember ended' 10 hostile
[ "$(cksum < "$chats/20991231-000000-000-newer0.json")" = "$newsum" ] && [ -p "$(h fifo00)" ] &&
    [ -d "$(h dir000)" ] && [ -L "$(h dangle)" ] && [ -f "$(h trunc0)" ] && [ -f "$(h big200)" ] &&
    [ -e "$unread" ] && in_some '"content": "new words"'
ok $? "the new turn is saved; the newer Ember's file and every unreadable entry are left untouched"
"$EMBER_BIN" --resume 20991231-000000-000-newer0 < /dev/null > /dev/null 2> "$tmp/n.err"
[ $? = 1 ] && grep -q 'newer Ember' "$tmp/n.err" && grep -q 'no saved conversation 20991231' "$tmp/n.err" &&
    [ "$(cksum < "$chats/20991231-000000-000-newer0.json")" = "$newsum" ]
ok $? "--resume of the newer file refuses and says why ($(tail -n 1 "$tmp/n.err"))"
chmod 600 "$unread"
"$EMBER_BIN" chats rm 20200101-000000-000-dangle > /dev/null 2>&1 && [ ! -L "$(h dangle)" ] &&
    "$EMBER_BIN" chats rm 20200101-000000-000-fifo00 > /dev/null 2>&1 && [ ! -e "$(h fifo00)" ]
ok $? "ember chats rm removes a dangling symlink or a FIFO named by its full id"

# no place for the store at all
env -u HOME -u XDG_STATE_HOME "$EMBER_BIN" chats > /dev/null 2> "$tmp/nh.err"
[ $? = 1 ] && grep -q 'no place for saved conversations (set XDG_STATE_HOME or HOME)' "$tmp/nh.err"
ok $? "HOME and XDG_STATE_HOME unset: ember chats says so"
env -u HOME -u XDG_STATE_HOME "$EMBER_BIN" -c < /dev/null > /dev/null 2> "$tmp/nh2.err"
[ $? = 1 ] && grep -q 'no place for saved conversations' "$tmp/nh2.err"
ok $? "and ember -c too"
echo hi | env -u HOME -u XDG_STATE_HOME "$EMBER_BIN" -m fake.gguf > "$tmp/nh3.out" 2> "$tmp/nh3.err"
grep -q 'You said: hi' "$tmp/nh3.out" && grep -q 'not being saved: no place' "$tmp/nh3.err"
ok $? "and a chat runs, saying it is not saved"
# a chats directory that cannot be written
if [ "$(id -u)" = 0 ]; then
    skip "root writes into a read-only directory"
else
    chmod 500 "$chats"
    echo 'ro words' | "$EMBER_BIN" -c > "$tmp/ro.out" 2> "$tmp/ro.err"
    grep -q 'You said: ro words' "$tmp/ro.out" && grep -q 'not being saved' "$tmp/ro.err"
    ok $? "a read-only chats directory: ember -c reads, answers, and says the turn is not saved"
    chmod 700 "$chats"
fi

tap_end
