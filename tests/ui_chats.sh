#!/bin/sh
# End to end: conversations are kept.  The full-screen chat on the fake
# engine, driven through tmux: two turns saved as they go, the last screen
# left in the shell after quitting, `ember chats` listing it, `ember -c`
# showing the old turns and appending to the same file (prefilling only
# the new message), /chats, /save FILE.json, /new, /load, --no-keep-screen,
# `ember chats rm`, a damaged file skipped (by ember -c too), a quit
# mid-reply, /new while the file cannot be written.  TAP; SKIP without tmux.
name=chats; . "${EMBER_SRCDIR:-.}/tests/tmux_lib.sh"
env_line="export LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
export XDG_CACHE_HOME=$tmp/cache TERM=screen EMBER_FAKE_ENGINE=1"
eval "$env_line"
export LANG LC_ALL XDG_STATE_HOME XDG_CONFIG_HOME XDG_CACHE_HOME EMBER_FAKE_ENGINE
chats="$tmp/state/ember/chats"

turns_of() { grep -c '"role": "assistant"' "$1" 2>/dev/null; }
has_turns() { [ "$(turns_of "$1")" = "$2" ]; }
wait_turns() { wait_until has_turns "$@"; }
has_files() { [ "$(ls "$chats" 2>/dev/null | wc -l)" = "$1" ]; }

start one -m fake.gguf || skip_all "tmux cannot start a session"
wait_for 'RSS' 20 one || skip_all "the chat did not start"
$T send-keys -t one 'first question' Enter
wait_for 'You said: first question' 10 one
ok $? "the first reply arrives"
wait_until has_files 1
f=$(ls "$chats"/*.json 2>/dev/null | head -n 1)
[ -n "$f" ] && wait_turns "$f" 1
ok $? "the conversation is saved after the first turn ($f)"
$T send-keys -t one 'second question: ünïcödé 日本' Enter
wait_for 'You said: second question' 10 one
wait_turns "$f" 2 && grep -q 'ünïcödé 日本' "$f"
ok $? "the second turn is saved to the same file, Unicode intact"
id=$(basename "$f" .json)
[ "$(stat -c %a "$chats")" = 700 ] && [ "$(stat -c %a "$f")" = 600 ]
ok $? "the directory is 0700 and the file 0600"
grep -q '"prompt_tokens"' "$f" && grep -q '"decode_tps"' "$f" && grep -q '"ttft_ms"' "$f" &&
    grep -q '"version": 1' "$f" && grep -q "\"id\": \"$id\"" "$f" && grep -q '"model": "fake.gguf"' "$f"
ok $? "the file has the version, id, model and per-turn stats"

$T send-keys -t one C-d
wait_for '^--- ember ended' 10 one
ok $? "Ctrl-D quits"
screen one > "$tmp/after.txt"
grep -q 'You said: second question' "$tmp/after.txt" && grep -q 'first question' "$tmp/after.txt" &&
    ! grep -q 'Ctrl-D quit' "$tmp/after.txt"
ok $? "after quitting, the conversation's last screen stays in the shell (not the status bar or input)"
[ "$(cat "$tmp/one.rc")" = 0 ]; ok $? "exit status 0"

"$EMBER_BIN" chats > "$tmp/list.txt" 2> "$tmp/list.err"
ok $? "ember chats runs"
grep -q "^$id .*fake.gguf .* 2  first question" "$tmp/list.txt"
ok $? "ember chats lists it: id, model, turns, first line ($(tail -n 1 "$tmp/list.txt"))"

# -c: the old turns on screen, a new turn appended to the same file, and
# only the new message prefilled (the worker was given the history)
start two -c
wait_for 'reopened conversation' 10 two
ok $? "ember -c reopens the last conversation"
screen two | grep -q 'first question' && screen two | grep -q 'You said: second question'
ok $? "the old turns are shown"
$T send-keys -t two 'third question' Enter
wait_for 'You said: third question' 10 two
wait_turns "$f" 3 && [ "$(ls "$chats" | wc -l)" = 1 ]
ok $? "a new turn appends to the same file"
want=$(printf '<user>third question\n<assistant>' | wc -c)
got=$(grep -o '"prompt_tokens": [0-9]*' "$f" | tail -n 1 | grep -o '[0-9]*$')
[ "$got" = "$want" ]
ok $? "the model was re-prefilled with the history: the new turn prefilled only its message ($got = $want tokens)"

$T send-keys -t two '/chats' Enter
wait_for "\\* $id .* 3 turns +first question" 5 two
ok $? "/chats lists the conversation, marked as the current one"

$T send-keys -t two "/save $tmp/x.json" Enter
wait_for 'saved the transcript to .*x.json' 5 two
mkdir -p "$tmp/st2/ember/chats"
cp "$tmp/x.json" "$tmp/st2/ember/chats/$id.json" 2>/dev/null
XDG_STATE_HOME=$tmp/st2 "$EMBER_BIN" chats 2>&1 | grep -q "^$id .* 3  first question"
ok $? "/save FILE.json writes the saved file's JSON (it reads back as the same conversation)"
$T send-keys -t two "/save $tmp/x.md" Enter
wait_for 'saved the transcript to .*x.md' 5 two
grep -q '^## User' "$tmp/x.md" && grep -q 'You said: third question' "$tmp/x.md"
ok $? "/save FILE.md still writes Markdown"

$T send-keys -t two '/new' Enter
sleep 0.3
$T send-keys -t two 'a fresh talk' Enter
wait_for 'You said: a fresh talk' 10 two
wait_until has_files 2 && [ "$(turns_of "$f")" = 3 ] && ! screen two | grep -q 'first question'
ok $? "/new starts a second file; the first keeps its three turns"

pre=$(echo "$id" | cut -c1-22)
$T send-keys -t two "/load $pre" Tab
wait_for "> /load $id" 5 two
ok $? "Tab completes a /load id"
$T send-keys -t two C-u "/load $pre" Enter
wait_for "reopened conversation $id" 5 two
ok $? "/load with a unique id prefix reopens the first conversation"
$T send-keys -t two 'fourth question' Enter
wait_for 'You said: fourth question' 10 two
wait_turns "$f" 4
ok $? "a turn after /load appends to that conversation"
$T send-keys -t two '/load nosuchid' Enter
wait_for '/load: no saved conversation nosuchid' 5 two
ok $? "/load of an unknown id says so"
$T send-keys -t two '/quit' Enter
wait_for '^--- ember ended' 10 two

start three -c --no-keep-screen
wait_for 'reopened conversation' 10 three
$T send-keys -t three C-d
wait_for '^--- ember ended' 10 three
! screen three | grep -q 'You said'
ok $? "--no-keep-screen leaves nothing of the conversation behind"

# a reply with a code block: kept byte for byte by /save in Markdown (fences
# and all) and in JSON, and the kept screen shows it laid out
printf 'Here:\n\n```c\nint main(void)\n{\n\treturn "\\"q\\"";\n}\n```\n' > "$tmp/code.md"
extra_env="export EMBER_FAKE_REPLY=$tmp/code.md"
start four -m fake.gguf
extra_env=
wait_for 'RSS' 10 four
$T send-keys -t four 'code please' Enter
wait_for 'code 1: c' 10 four
$T send-keys -t four "/save $tmp/code-out.md" Enter
wait_for 'saved the transcript to .*code-out.md' 5 four
$T send-keys -t four "/save $tmp/code-out.json" Enter
wait_for 'saved the transcript to .*code-out.json' 5 four
sed -n "/^## Assistant/,\$p" "$tmp/code-out.md" | sed 1,2d | head -n 8 > "$tmp/code-got.md"
cmp -s "$tmp/code.md" "$tmp/code-got.md"
ok $? "/save FILE.md keeps the reply's code block with its fences, byte for byte"
grep -qF '"content": "Here:\n\n```c\nint main(void)\n{\n\treturn \"\\\"q\\\"\";\n}\n```\n"' "$tmp/code-out.json"
ok $? "/save FILE.json holds it as one JSON string"
$T send-keys -t four C-d
wait_for '^--- ember ended' 10 four
screen four | grep -q 'code 1: c' && screen four | grep -qF 'return "\"q\"";'
ok $? "the kept screen shows the reply as laid out"

# a damaged file and one from a newer Ember are reported and skipped
echo '{"version": 1, "id": "2020' > "$chats/20200101-000000-000-aaaaaa.json"
printf '{"version": 7, "id": "20200101-000000-000-bbbbbb", "created": "2020-01-01T00:00:00Z", "messages": []}\n' \
    > "$chats/20200101-000000-000-bbbbbb.json"
"$EMBER_BIN" chats > "$tmp/list2.txt" 2> "$tmp/list2.err"
r=$?
[ $r = 0 ] && [ "$(grep -c '^20[0-9][0-9]' "$tmp/list2.txt")" = 3 ] &&
    grep -q 'aaaaaa.json: not valid JSON' "$tmp/list2.err" && grep -q 'newer Ember' "$tmp/list2.err"
ok $? "damaged and newer files are reported and skipped ($(tr '\n' ' ' < "$tmp/list2.err"))"
# ember -c past a damaged newer file says so in the chat, where it is
# seen: on stderr it was hidden behind the screen until the chat ended
echo '{"version": 1, "id": "2099' > "$chats/20991231-000000-000-zzzzzz.json"
start five -c
wait_for 'reopened conversation' 10 five
wait_for 'skipping .*zzzzzz.json: not valid JSON' 5 five
ok $? "ember -c: a damaged newer file skipped is said in the chat"
$T send-keys -t five C-d
wait_for '^--- ember ended' 10 five
rm -f "$chats/20991231-000000-000-zzzzzz.json"
"$EMBER_BIN" chats --json > "$tmp/list.json" 2>/dev/null
grep -q "\"id\": \"$id\"" "$tmp/list.json" && grep -q '"turns": 4' "$tmp/list.json"
ok $? "ember chats --json lists them as JSON"
"$EMBER_BIN" chats rm "$id" > "$tmp/rm.txt" && [ ! -e "$f" ] && grep -q "removed conversation $id" "$tmp/rm.txt"
ok $? "ember chats rm ID removes one"
"$EMBER_BIN" chats rm "$id" 2> "$tmp/rm.err"
[ $? = 1 ] && grep -q 'no saved conversation' "$tmp/rm.err"
ok $? "removing it again fails with a message"
"$EMBER_BIN" --resume nosuch 2> "$tmp/res.err"
[ $? = 1 ] && grep -q 'no saved conversation nosuch' "$tmp/res.err"
ok $? "--resume of an unknown id fails before the screen opens"

# quitting while a reply streams keeps the turn, the reply as far as it
# got and marked stopped (the file is written when a reply ends: the turn
# was lost, and ember -c found no conversation)
rm -rf "$chats"
extra_env="export EMBER_FAKE_DELAY_MS=100"
start mid -m fake.gguf
wait_for 'RSS' 20 mid
$T send-keys -t mid 'mid question' Enter
wait_for 'You sa' 10 mid
$T send-keys -t mid C-d
wait_until test -s "$tmp/mid.rc"
mf=$(ls "$chats"/*.json 2>/dev/null | head -n 1)
[ -n "$mf" ] && grep -q '"content": "mid question"' "$mf" && grep -q '"content": "You sa' "$mf" &&
    grep -q '"cancelled": true' "$mf"
ok $? "quitting mid-reply saves the message and the reply so far, marked stopped"
extra_env=

# a conversation that cannot be saved (the chats folder is a file here;
# a full disk alike) is not dropped by /new unasked, and is saved as soon
# as it can be
rm -rf "$chats"
echo > "$chats"
start nosave -m fake.gguf
wait_for 'RSS' 20 nosave
$T send-keys -t nosave 'unsaved words' Enter
wait_for 'not being saved' 10 nosave
$T send-keys -t nosave '/new' Enter
wait_for 'this conversation is not saved' 5 nosave && screen nosave | grep -q 'unsaved words'
ok $? "/new refuses to drop a conversation the file does not hold"
rm -f "$chats" && mkdir "$chats"
$T send-keys -t nosave '/new' Enter
wait_for 'a new conversation' 5 nosave
nf=$(ls "$chats"/*.json 2>/dev/null | head -n 1)
[ -n "$nf" ] && grep -q '"content": "unsaved words"' "$nf"
ok $? "the next /new saves it first, once it can"
$T send-keys -t nosave C-d

# plain line mode keeps its conversations the same way
rm -rf "$chats"
printf 'plain hello\n' | "$EMBER_BIN" -m fake.gguf > "$tmp/p1.out" 2> "$tmp/p1.err"
pf=$(ls "$chats"/*.json 2>/dev/null | head -n 1)
[ -n "$pf" ] && [ "$(turns_of "$pf")" = 1 ] && grep -q 'plain hello' "$pf"
ok $? "plain mode saves its conversation too"
printf 'plain again\n' | "$EMBER_BIN" -c > "$tmp/p2.out" 2> "$tmp/p2.err"
want=$(printf '<user>plain again\n<assistant>' | wc -c)
got=$(grep -o '"prompt_tokens": [0-9]*' "$pf" | tail -n 1 | grep -o '[0-9]*$')
grep -q 'You said: plain again' "$tmp/p2.out" && grep -q 'reopened conversation' "$tmp/p2.err" &&
    [ "$(turns_of "$pf")" = 2 ] && [ "$(ls "$chats" | wc -l)" = 1 ] && [ "$got" = "$want" ]
ok $? "plain ember -c goes on with it, prefilling only the new message ($got = $want)"
pid=$(basename "$pf" .json)
printf '/new\nother talk\n/chats\n/load %s\nback again\n' "$(echo "$pid" | cut -c1-22)" |
    "$EMBER_BIN" -m fake.gguf > "$tmp/p3.out" 2> "$tmp/p3.err"
grep -q "^ember: saved conversations" "$tmp/p3.err" && grep -q "reopened conversation $pid (2 turns)" "$tmp/p3.err" &&
    [ "$(turns_of "$pf")" = 3 ] && [ "$(ls "$chats" | wc -l)" = 2 ] && grep -q 'You said: back again' "$tmp/p3.out"
ok $? "plain mode has /new, /chats and /load too"

tap_end
