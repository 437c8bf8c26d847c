#!/bin/sh
# Input defects of the full-screen chat, driven through tmux with the fake
# engine as a person would: a bracketed paste keeps tabs and turns CRLF
# into one line end; a message longer than the context leaves no turn
# behind (transcript, /save, TTFT) and comes back as the draft; Up / Down
# and Ctrl-A / Ctrl-E work line by line in a draft of several lines;
# /system alone says what it removed; the status bar keeps the model name
# at 120 columns; /read, the external editor; plain mode at a keyboard with
# stdout piped edits lines; LANG=C; an unknown TERM.  TAP; SKIP without tmux.
name=input; . "${EMBER_SRCDIR:-.}/tests/tmux_lib.sh"
cat > "$tmp/run.sh" <<EOF2
#!/bin/sh
export LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
export XDG_CACHE_HOME=$tmp/cache TERM=screen EMBER_FAKE_ENGINE=1
"$EMBER_BIN" -m fake.gguf --ctx \${CTX:-4096}
echo \$? > "\$0.rc"
EOF2
chmod +x "$tmp/run.sh"
input() { screen | sed -n '/^> /,$p'; }   # the draft: from the prompt to the bottom

$T new-session -d -s ember -x 120 -y 40 "CTX=64 $tmp/run.sh" || skip_all "tmux cannot start a session"
wait_for 'RSS' 20 || skip_all "the chat did not start"

screen | grep 'RSS' | grep -q 'fake-echo'
ok $? "at 120 columns the status bar still names the model"

# 1. a message longer than the context (64 tokens)
i=0; long=""; while [ $i -lt 120 ]; do long="$long word$i"; i=$((i + 1)); done
printf '%s' "$long" > "$tmp/long"
$T load-buffer "$tmp/long"
$T paste-buffer -p -r -t ember
$T send-keys -t ember Enter
wait_for 'context holds 64' 10
ok $? "the overlong message is refused with the context size"
! screen | grep -q '^you$'
ok $? "no user turn is left in the transcript"
screen | grep 'RSS' | grep -q 'TTFT --'
ok $? "no TTFT is shown for a turn that never ran (it was the first)"
input | grep -q 'word119'
ok $? "the message is back in the draft, to shorten"
$T send-keys -t ember C-u
sleep 0.2
$T send-keys -t ember "/save $tmp/t2.md" Enter
wait_for 'saved the transcript to .*t2.md' 5
! grep -q 'word1' "$tmp/t2.md"
ok $? "/save has no trace of it"
$T send-keys -t ember 'short one' Enter
wait_for 'You said: short one' 10
ok $? "the next message is answered"

# 2. a paste: tab and CRLF (-r: tmux sends the bytes as they are)
printf 'a\tbc\td\r\nc d' > "$tmp/paste"
$T load-buffer "$tmp/paste"
$T paste-buffer -p -r -t ember
wait_for '^> a   bc  d$' 5
ok $? "the pasted tabs show as blanks to the 4-column stops in the draft"
$T send-keys -t ember Enter
wait_for 'You said: a' 10
sleep 0.3
screen | grep -q '^  a   bc  d$'
ok $? "the transcript lays the tabs out as the draft did"
screen | grep -q "^  You said: a bc  d"
ok $? "so does the reply (Markdown: the echo, so the engine got the tabs), from its text's start"
$T send-keys -t ember "/save $tmp/t1.md" Enter
wait_for 'saved the transcript to .*t1.md' 5
printf '## User\n\na\tbc\td\nc d\n' > "$tmp/want1"
grep -A3 '^## User' "$tmp/t1.md" | tail -n 4 > "$tmp/got1"
cmp -s "$tmp/want1" "$tmp/got1"
ok $? "the message keeps the tab and one line end for CRLF ($(od -c "$tmp/got1" | head -2 | tr -s ' ' | tr '\n' ' '))"

# 3. a draft of two lines: Up / Down and Ctrl-A / Ctrl-E by line
printf 'line one\nline two' > "$tmp/ml"
$T load-buffer "$tmp/ml"
$T paste-buffer -p -r -t ember
sleep 0.3
$T send-keys -t ember Up X C-a Y
sleep 0.3
input | grep -q '^> Yline oneX$' && input | grep -q '^  line two$'
ok $? "Up moves to the line above, Ctrl-A to that line's start (not the history)"
$T send-keys -t ember Down C-e Z
sleep 0.3
input | grep -q '^  line twoZ$'
ok $? "Down and Ctrl-E work on the second line"
$T send-keys -t ember Enter
wait_for 'You said: Yline oneX' 10
$T send-keys -t ember Up
sleep 0.3
input | grep -q '^> Yline oneX$'
ok $? "on an empty draft Up walks the history (the two-line message comes back)"
$T send-keys -t ember Up Up
sleep 0.3
input | grep -q '^> /save '
ok $? "Up moves to its first line, then on to the older entry"
$T send-keys -t ember C-a C-k

# 4. /system alone
$T send-keys -t ember '/system be brief' Enter
sleep 0.3
$T send-keys -t ember '/system' Enter
wait_for 'system prompt removed \(it was: be brief\)' 5
ok $? "/system alone says it removed the prompt and what it was"
$T send-keys -t ember '/system' Enter
wait_for 'no system prompt is set' 5
ok $? "/system alone with none set says so"

# 5. /read FILE: fenced before the next message (a context that holds it)
$T kill-session -t ember
$T new-session -d -s ember -x 120 -y 40 "$tmp/run.sh"
wait_for 'RSS' 20
printf 'col1\tcol2\n' > "$tmp/data.tsv"
$T send-keys -t ember "/read $tmp/data.tsv" Enter
wait_for 'attached .*data.tsv \(10 bytes\)' 5
ok $? "/read says what it attached"
$T send-keys -t ember 'what is in it' Enter
wait_for 'You said: ```data.tsv' 10 && screen | grep -q '^  ```data.tsv$' && screen | grep -q '^  col1    col2$' 
ok $? "the file goes with the next message, fenced with its name"
$T send-keys -t ember "/read $tmp" Enter
wait_for 'not a regular file' 5
ok $? "/read of a directory is refused"

# 6. the external editor: Ctrl-X Ctrl-E and /edit
cat > "$tmp/ed.sh" <<'EOF2'
#!/bin/sh
cp "$1" "${1%/*}/seen-by-editor"
printf 'from the editor\n' > "$1"
EOF2
chmod +x "$tmp/ed.sh"
$T kill-session -t ember
$T new-session -d -s ember -x 120 -y 40 "VISUAL='sh $tmp/ed.sh' TMPDIR=$tmp $tmp/run.sh"
wait_for 'RSS' 20
$T send-keys -t ember 'my draft'
sleep 0.2
$T send-keys -t ember C-x C-e
wait_for '^> from the editor$' 10 && grep -qx 'my draft' "$tmp/seen-by-editor"
ok $? "Ctrl-X Ctrl-E: the editor gets the draft, its text comes back as the draft"
[ ! -e "$tmp"/ember-draft-* ] 2>/dev/null; ok $? "the editor's temporary file is removed"
$T send-keys -t ember C-a C-k '/edit' Enter
wait_for '^> from the editor$' 10
ok $? "/edit does the same"
$T send-keys -t ember C-a C-k
$T kill-session -t ember
$T new-session -d -s ember -x 120 -y 40 "VISUAL=false $tmp/run.sh"
wait_for 'RSS' 20
$T send-keys -t ember 'kept draft'
sleep 0.2
$T send-keys -t ember C-x C-e
wait_for 'failed \(status 1\): the draft is unchanged' 10 && screen | grep -q '^> kept draft'
ok $? "an editor that fails leaves the draft as it was, and says so"
$T send-keys -t ember C-a C-k

$T send-keys -t ember '/quit' Enter
sleep 0.5
[ "$(cat "$tmp/run.sh.rc" 2>/dev/null)" = 0 ]; ok $? "/quit exits 0"

# 7. plain mode at a keyboard with stdout piped: line editing and history
cat > "$tmp/pipe.sh" <<EOF2
#!/bin/sh
export LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
export XDG_CACHE_HOME=$tmp/cache TERM=screen EMBER_FAKE_ENGINE=1
"$EMBER_BIN" -m fake.gguf > "$tmp/piped.out"
echo \$? > "$tmp/pipe.rc"
sleep 30
EOF2
chmod +x "$tmp/pipe.sh"
$T new-session -d -s pipe -x 100 -y 20 "$tmp/pipe.sh"
wait_for '^> ' 10 pipe
$T send-keys -t pipe 'helo' Left Left 'l'
sleep 0.2
$T send-keys -t pipe Enter
i=0; while [ $i -lt 50 ] && ! grep -q 'You said' "$tmp/piped.out" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
grep -qx 'You said: hello' "$tmp/piped.out"
ok $? "stdout piped, stdin a terminal: the line is edited with the arrow keys ($(cat "$tmp/piped.out" 2>/dev/null))"
wait_for '^> $' 5 pipe
$T send-keys -t pipe Up
sleep 0.2
[ "$(screen pipe | grep -c '^> hello$')" -ge 2 ]
ok $? "and Up recalls the previous line"
$T send-keys -t pipe C-u C-d
i=0; while [ $i -lt 50 ] && [ ! -s "$tmp/pipe.rc" ]; do sleep 0.1; i=$((i + 1)); done
[ "$(cat "$tmp/pipe.rc" 2>/dev/null)" = 0 ] && ! grep -q 'tok/s' "$tmp/piped.out"
ok $? "Ctrl-D ends it (exit 0); the numbers stay off stdout"

# 8. LANG=C (an ASCII locale) on a UTF-8 terminal: a typed "é" swallowed
# the keys after it, Enter included, and a reply's CJK did not show
sed 's/LANG=C.UTF-8 LC_ALL=C.UTF-8/LANG=C LC_ALL=C/' "$tmp/run.sh" > "$tmp/run_c.sh"
chmod +x "$tmp/run_c.sh"
$T new-session -d -s clocale -x 80 -y 20 "$tmp/run_c.sh"
wait_for 'RSS' 20 clocale
$T send-keys -t clocale 'héllo 日本' Enter
wait_for 'You said' 5 clocale && screen clocale | grep -q '^  You said: héllo 日本$' &&
    screen clocale | grep -q '^fake-echo | '
ok $? "LANG=C: non-ASCII input and text go as UTF-8, the layout's marks stay ASCII"
$T send-keys -t clocale C-d
sed "s/LANG=C.UTF-8 LC_ALL=C.UTF-8/LANG=C LC_ALL=C/; s/piped.out/piped_c.out/; s/pipe.rc/pipe_c.rc/" "$tmp/pipe.sh" > "$tmp/pipe_c.sh"
chmod +x "$tmp/pipe_c.sh"
$T new-session -d -s pipec -x 80 -y 20 "$tmp/pipe_c.sh"
wait_for '^> ' 10 pipec
$T send-keys -t pipec 'héllo 日本' Enter
i=0; while [ $i -lt 50 ] && ! grep -q 'You said' "$tmp/piped_c.out" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
grep -qx 'You said: héllo 日本' "$tmp/piped_c.out"
ok $? "LANG=C, plain mode at a keyboard: the line keeps its non-ASCII characters"
$T send-keys -t pipec C-d

# 9. a TERM without a terminfo entry here (a new terminal's name over ssh):
# curses' initscr ended ember at once; it is plain line mode, said so
sed 's/TERM=screen/TERM=no-such-term-xyz/' "$tmp/run.sh" > "$tmp/run_t.sh"
chmod +x "$tmp/run_t.sh"
$T new-session -d -s noterm -x 100 -y 20 "$tmp/run_t.sh; sleep 30"
wait_for 'plain line mode' 10 noterm
$T send-keys -t noterm 'hi there' Enter
wait_for '^You said: hi there' 5 noterm && screen noterm | grep -q 'TERM=no-such-term-xyz is not in'
ok $? "an unknown TERM gets plain line mode and a note, not 'Error opening terminal'"
$T send-keys -t noterm C-d
tap_end
