#!/bin/sh
# End to end: a Markdown reply in the full-screen chat, driven through
# tmux with the fake engine scripted to answer with a chosen text
# (EMBER_FAKE_REPLY): the code block and the table on the screen, /raw
# and F4, /copy's OSC 52 bytes (tmux with set-clipboard on keeps them as
# a paste buffer), a cut long line, NO_COLOR.  TAP; SKIP without tmux.
name=md; . "${EMBER_SRCDIR:-.}/tests/tmux_lib.sh"
tab=$(printf '\t')
cat > "$tmp/reply.md" <<EOF
## Result

Here is **the fix** with \`strlen\`:

\`\`\`c
#include <stdio.h>
int main(void)
{
${tab}printf("hi %d\\n", 42); /* say hi */
${tab}return 0; /* a comment long enough to be cut when the window is narrow */
}
\`\`\`

| Name | Size | Notes |
|:-----|-----:|:-----:|
| alpha | 1 | ok |
| beta-long | 12345 | fine |

> quoted line
EOF
# the code block's exact bytes, as /copy 1 must give them
sed -n '/^```c$/,/^```$/p' "$tmp/reply.md" | sed '1d;$d' > "$tmp/block1"

mkdir -p "$tmp/state" "$tmp/config" "$tmp/cache"
cat > "$tmp/run.sh" <<EOF
#!/bin/sh
export LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
export XDG_CACHE_HOME=$tmp/cache TERM=screen EMBER_FAKE_ENGINE=1 EMBER_FAKE_REPLY=$tmp/reply.md
unset NO_COLOR
"$EMBER_BIN" -m fake.gguf
echo \$? > "\$0.rc"
EOF
chmod +x "$tmp/run.sh"
sed 's/^unset NO_COLOR$/export NO_COLOR=1/' "$tmp/run.sh" > "$tmp/run_nc.sh"
chmod +x "$tmp/run_nc.sh"


$T new-session -d -s ember -x 100 -y 45 "$tmp/run.sh" || skip_all "tmux cannot start a session"
$T set-option -g set-clipboard on >/dev/null 2>&1
wait_for 'RSS' 20 || skip_all "the chat did not start"
$T send-keys -t ember 'show me' Enter
wait_for 'tok/s avg' 20
ok $? "the scripted reply arrives"
screen > "$tmp/shot1.txt"
echo "# screen:"; sed -n '/^assistant/,/quoted/p' "$tmp/shot1.txt" | sed 's/^/#   /'

grep -q '^  ## Result' "$tmp/shot1.txt" && grep -q '^  Here is the fix with strlen:' "$tmp/shot1.txt"
ok $? "heading and inline marks rendered"
! grep -q '```' "$tmp/shot1.txt" && grep -q '^  \[code 1: c\]' "$tmp/shot1.txt"
ok $? "the code block has no fences and a numbered label"
grep -q '^      printf("hi %d\\n", 42); /\* say hi \*/$' "$tmp/shot1.txt"
ok $? "the code line is shown as written (tab as 4 columns), not re-wrapped"
grep -q '^  │ Name      │  Size │ Notes │$' "$tmp/shot1.txt" &&
    grep -q '^  │ alpha     │     1 │  ok   │$' "$tmp/shot1.txt" &&
    grep -q '^  │ beta-long │ 12345 │ fine  │$' "$tmp/shot1.txt" &&
    grep -q '^  ├───────────┼───────┼───────┤$' "$tmp/shot1.txt"
ok $? "the table's columns are aligned (left, right, centre)"
grep -q '^  │ quoted line' "$tmp/shot1.txt"
ok $? "block quote with a bar"
esc=$(printf '\033')
$T capture-pane -e -p -t ember | grep -q "$esc\[[0-9;]*3[0-7]m#include"
ok $? "syntax colours in the code block"

$T send-keys -t ember '/raw' Enter
wait_for '^  ```c' 5 && screen | grep -q '^  | Name | Size | Notes |'
ok $? "/raw shows the reply's text as written"
$T send-keys -t ember F4
wait_for '^  \[code 1: c\]' 5 && ! screen | grep -q '```'
ok $? "F4 toggles back to Markdown"

$T send-keys -t ember '/copy 1' Enter
wait_for 'copied [0-9]+ bytes' 5
size=$(wc -c < "$tmp/block1" | tr -d ' ')
screen | grep -q "copied $size bytes (code block 1"
ok $? "/copy 1 notes the $size bytes copied"
$T show-buffer > "$tmp/got1" 2>/dev/null
cmp -s "$tmp/got1" "$tmp/block1"
ok $? "OSC 52 carried code block 1 byte for byte (tabs included)"
$T send-keys -t ember '/copy' Enter
sleep 0.5
$T show-buffer > "$tmp/got0" 2>/dev/null
cmp -s "$tmp/got0" "$tmp/reply.md"
ok $? "/copy carried the whole reply"
$T send-keys -t ember '/copy all' Enter
wait_for 'copied [0-9]+ bytes \(the conversation' 5
$T show-buffer > "$tmp/gotall" 2>/dev/null
$T send-keys -t ember "/save $tmp/all.md" Enter
wait_for 'saved the transcript to .*all.md' 5
[ -s "$tmp/gotall" ] && cmp -s "$tmp/gotall" "$tmp/all.md"
ok $? "/copy all carried the whole conversation, the same bytes as /save FILE.md"
$T send-keys -t ember '/copy 7' Enter
wait_for 'has 1 code block' 5
ok $? "/copy 7 says how many code blocks there are"

# A narrow window: long code lines are cut with a marker, not wrapped.
$T resize-window -t ember -x 50 -y 45 >/dev/null 2>&1 || $T resize-pane -t ember -x 50 -y 45
sleep 0.6
screen > "$tmp/shot2.txt"
grep -q '^      return 0; /\* a comment long enough to be cu→$' "$tmp/shot2.txt" &&
    ! grep -q '^ *narrow \*/' "$tmp/shot2.txt"
ok $? "a code line wider than the window is cut with a marker"
echo "# at 50 columns:"; sed -n '/^  \[code 1/,/quoted/p' "$tmp/shot2.txt" | sed 's/^/#   /'
# Narrower than the table at its narrowest: its lines are cut at the edge
# (they used to run on at the start of the row below, over its border).
$T resize-window -t ember -x 14 -y 45 >/dev/null 2>&1 || $T resize-pane -t ember -x 14 -y 45
$T send-keys -t ember 'again' Enter
wait_for 'quoted' 10
screen > "$tmp/shot3.txt"
grep -q '^  ├───┼───┼───$' "$tmp/shot3.txt" && ! grep -q '^[│├┼┴─]' "$tmp/shot3.txt"
ok $? "a table wider than a narrow window is cut at its edge, not run onto the next row"
$T resize-window -t ember -x 100 -y 45 >/dev/null 2>&1 || $T resize-pane -t ember -x 100 -y 45

# NO_COLOR: the same structure, no colour codes.
$T new-session -d -s nocolor -x 100 -y 45 "$tmp/run_nc.sh"
wait_for 'RSS' 20 nocolor
$T send-keys -t nocolor 'show me' Enter
wait_for 'tok/s avg' 20 nocolor
$T capture-pane -e -p -t nocolor > "$tmp/nc.txt"
screen nocolor > "$tmp/nc_plain.txt"
! grep -q "$esc\[3[0-7]m" "$tmp/nc.txt" && grep -q '^  \[code 1: c\]' "$tmp/nc_plain.txt" &&
    grep -q '^  │ alpha     │     1 │  ok   │$' "$tmp/nc_plain.txt" && grep -q '`strlen`' "$tmp/nc_plain.txt"
ok $? "NO_COLOR: no colours; label, table borders and backticks carry the structure"
$T send-keys -t nocolor C-d

$T send-keys -t ember '/quit' Enter
i=0; while [ ! -s "$tmp/run.sh.rc" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(cat "$tmp/run.sh.rc" 2>/dev/null)" = 0 ]; ok $? "/quit exits with status 0"

tap_end
