#!/bin/sh
# One-shot use (ember -m M -p TEXT, with stdin's text and -f files before
# it) and /read in plain mode: the exact message the model gets (the fake
# engine echoes it), refusals, and a real answer from the trained
# chat-mini model when ../shared is there.  TAP.
set -u
EMBER_BIN=${EMBER_BIN:-./ember}
SHARED=${EMBER_SHARED:-}
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
[ -x "$EMBER_BIN" ] || { echo "1..0 # SKIP no ember binary at $EMBER_BIN"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ember-oneshot.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" LC_ALL=C.UTF-8
fake() { EMBER_FAKE_ENGINE=1 "$EMBER_BIN" -m fake.gguf "$@"; }

fake -p 'hello there' < /dev/null > "$tmp/o1" 2> "$tmp/e1"; r=$?
[ $r = 0 ] && [ "$(cat "$tmp/o1")" = "You said: hello there" ]
ok $? "-p sends one message and prints the reply (rc $r: $(cat "$tmp/o1"))"
grep -q 'tok/s' "$tmp/e1"; ok $? "the numbers go to stderr"

printf 'alpha\tbeta\n' > "$tmp/notes.txt"
printf 'piped line\n' | fake -p 'summarize' -f "$tmp/notes.txt" > "$tmp/o2" 2>/dev/null; r=$?
printf 'You said: ```stdin\npiped line\n```\n\n```notes.txt\nalpha\tbeta\n```\n\nsummarize\n' > "$tmp/w2"
[ $r = 0 ] && cmp -s "$tmp/o2" "$tmp/w2"
ok $? "stdin's text and the -f file come first, fenced with their names, then the prompt"

fake -p x -f "$tmp/none" < /dev/null > /dev/null 2> "$tmp/e3"; r=$?
[ $r = 1 ] && grep -q "ember: -f $tmp/none: No such file" "$tmp/e3"
ok $? "a missing -f file: exit 1 and its name ($(cat "$tmp/e3"))"
printf 'a\000b' | fake -p x > /dev/null 2> "$tmp/e4"; r=$?
[ $r = 1 ] && grep -q 'stdin is not text' "$tmp/e4"
ok $? "binary stdin is refused (rc $r)"
head -c 4194305 /dev/zero | tr '\0' a | fake -p x > /dev/null 2> "$tmp/e4b"; r=$?
[ $r = 1 ] && grep -q 'stdin: more than 4 MiB' "$tmp/e4b"
ok $? "stdin over 4 MiB is refused (rc $r: $(cat "$tmp/e4b"))"
fake -p x -f "$tmp" < /dev/null > /dev/null 2> "$tmp/e5"; r=$?
[ $r = 1 ] && grep -q 'not a regular file' "$tmp/e5"
ok $? "a directory as -f is refused"

printf 'first\n/read %s\nwhat is it\n' "$tmp/notes.txt" | fake > "$tmp/o6" 2> "$tmp/e6"; r=$?
[ $r = 0 ] && grep -q 'attached .*notes.txt (11 bytes)' "$tmp/e6" &&
    [ "$(sed -n 2p "$tmp/o6")" = 'You said: ```notes.txt' ] && [ "$(tail -n 1 "$tmp/o6")" = 'what is it' ]
ok $? "plain mode: /read puts the file before the next line's message"

# a kill while the reply streams: the turn is saved, marked stopped, and
# ember still ends as killed (it used to end at once, the turn lost)
EMBER_FAKE_ENGINE=1 EMBER_FAKE_DELAY_MS=200 "$EMBER_BIN" -m fake.gguf -p 'stop me' < /dev/null > "$tmp/o9" 2> /dev/null &
pid=$!
i=0; while [ $i -lt 100 ] && [ ! -s "$tmp/o9" ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $pid; wait $pid; r=$?
sf=$(grep -l '"content": "stop me"' "$tmp/state/ember/chats/"*.json 2>/dev/null | head -n 1)
[ $r = 143 ] && [ -n "$sf" ] && grep -q '"content": "Y' "$sf" && grep -q '"cancelled": true' "$sf"
ok $? "SIGTERM mid-reply: the turn is saved as far as it got, marked stopped (rc $r)"

M="$SHARED/fixtures/models/chat-mini-Q8_0.gguf"
if [ -n "$SHARED" ] && [ -f "$M" ]; then
    "$EMBER_BIN" -m "$M" -t 2 -p 'What is 23 plus 48?' < /dev/null > "$tmp/o7" 2>/dev/null; r=$?
    [ $r = 0 ] && [ "$(wc -l < "$tmp/o7")" = 1 ] && grep -q '^23 plus 48 is [0-9]*\.$' "$tmp/o7"
    ok $? "chat-mini answers in its template and ends its turn: '$(cat "$tmp/o7")'"
    grep -l '"template": "gguf (jinja)"' "$tmp/state/ember/chats/"*.json >/dev/null 2>&1
    ok $? "the saved conversation names the template it ran in (the GGUF's Jinja)"
    # ember -c when the saved conversation's model has gone: how to go on
    cp "$M" "$tmp/moved.gguf"
    "$EMBER_BIN" -m "$tmp/moved.gguf" -t 2 -p 'Hello there! I am Pia.' < /dev/null > /dev/null 2>&1
    rm -f "$tmp/moved.gguf"
    "$EMBER_BIN" -c -p x < /dev/null > /dev/null 2> "$tmp/e8"; r=$?
    [ $r = 1 ] && grep -q "moved.gguf: No such file" "$tmp/e8" && grep -q 'was saved with that model: -c -m MODEL' "$tmp/e8"
    ok $? "ember -c without the saved model says -c -m MODEL goes on ($(tr '\n' ' ' < "$tmp/e8"))"
else
    skip "no ../shared/fixtures (chat-mini)"
    skip "no ../shared/fixtures (chat-mini)"
    skip "no ../shared/fixtures (chat-mini)"
fi
echo "1..$n"
exit $fail
