#!/bin/sh
# End to end: a reasoning reply in the full-screen chat (fake engine
# scripted to answer "<think>...</think> answer", streaming slowly): the
# thinking is folded to "thinking… (N tokens)" while it streams and after,
# /think show|hide and F5 unfold and fold it, /info names the model,
# architecture, template, reasoning switch, context and profile, and
# /set reasoning off on a template without enable_thinking says so; --think show starts it
# unfolded; plain line mode on a terminal folds it too.  TAP; SKIP without
# tmux.
name=think; . "${EMBER_SRCDIR:-.}/tests/tmux_lib.sh"
think='<think>
The user greets me. I should answer kindly and briefly.
</think>'
printf '%s\n\nHello! Nice to meet you.' "$think" > "$tmp/reply.txt"
# the fake engine streams a byte per token: the fold counts the tags too
n_think=$(printf '%s' "$think" | wc -c | tr -d ' ')

mkdir -p "$tmp/state" "$tmp/config" "$tmp/cache"
cat > "$tmp/run.sh" <<RUN
#!/bin/sh
export LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
export XDG_CACHE_HOME=$tmp/cache TERM=screen EMBER_FAKE_ENGINE=1 EMBER_FAKE_REPLY=$tmp/reply.txt
export EMBER_FAKE_DELAY_MS=40
"$EMBER_BIN" -m fake.gguf "\$@"
echo \$? > "\$0.rc"
RUN
chmod +x "$tmp/run.sh"


$T new-session -d -s ember -x 160 -y 40 "$tmp/run.sh" || skip_all "tmux cannot start a session"
wait_for 'RSS' 20 || skip_all "the chat did not start"
wait_for 'tmpl fake' 5
ok $? "the status bar names the template"
echo "# status: $(screen | grep 'RSS' | tail -n 1)"

$T send-keys -t ember 'hi' Enter
wait_for '^  thinking… \([0-9]+ tokens?\)' 10
r=$?
screen > "$tmp/mid.txt"
! grep -q 'tok/s avg' "$tmp/mid.txt" && ! grep -q 'greets me' "$tmp/mid.txt" && ! grep -q '<think' "$tmp/mid.txt"
ok $((r + $?)) "while it streams the thinking is one folded line, its text hidden"
echo "# mid-stream: $(grep 'thinking' "$tmp/mid.txt")"

wait_for 'tok/s avg' 30
ok $? "the reply finishes"
screen > "$tmp/done.txt"
grep -q "^  thinking… ($n_think tokens)\$" "$tmp/done.txt" && grep -q '^  Hello! Nice to meet you.' "$tmp/done.txt" &&
    ! grep -q 'greets me' "$tmp/done.txt"
ok $? "after it: 'thinking… ($n_think tokens)' then the answer"
echo "# screen:"; sed -n '/^assistant/,/Nice/p' "$tmp/done.txt" | sed 's/^/#   /'

$T send-keys -t ember '/think show' Enter
wait_for 'greets me' 5 && ! screen | grep -q '^  thinking… ('
ok $? "/think show unfolds it"
$T send-keys -t ember '/think hide' Enter
wait_for "^  thinking… \\($n_think tokens\\)" 5 && ! screen | grep -q 'greets me'
ok $? "/think hide folds it again"
$T send-keys -t ember F5
wait_for 'greets me' 5
ok $? "F5 unfolds"
$T send-keys -t ember F5
wait_for "^  thinking… \\($n_think tokens\\)" 5 && ! screen | grep -q 'greets me'
ok $? "F5 again folds"
$T send-keys -t ember '/think maybe' Enter
wait_for "/think takes show, hide or nothing" 5
ok $? "/think with another word is refused with what it takes"

$T send-keys -t ember '/info' Enter
wait_for '^ +template: ' 5
screen > "$tmp/info.txt"
grep -Eq '^ +model: fake-echo$' "$tmp/info.txt" && grep -Eq '^ +architecture: fake$' "$tmp/info.txt" &&
    grep -Eq '^ +template: fake \(echo\)$' "$tmp/info.txt" &&
    grep -Eq '^ +context: [0-9]+ tokens, [0-9]+ in use$' "$tmp/info.txt" && grep -Eq '^ +profile: ' "$tmp/info.txt" &&
    grep -Eq '^ +reasoning: auto \(as the template decides' "$tmp/info.txt"
ok $? "/info: model, architecture, template, reasoning, context and profile"
echo "# info:"; sed -n '/^ *model:/,/^ *plan:/p' "$tmp/info.txt" | sed 's/^/#   /'

# the reasoning switch: the fake engine's template has none, which is said
$T send-keys -t ember '/set reasoning off' Enter
wait_for 'no thinking switch' 5
ok $? "/set reasoning off on a template without enable_thinking says it changes nothing"
$T send-keys -t ember '/set reasoning maybe' Enter
wait_for "/set reasoning: expected one of auto, on, off, got 'maybe'" 5
ok $? "/set reasoning refuses another word, naming the three"
$T send-keys -t ember '/info' Enter
wait_for '^ +reasoning: off$' 5
ok $? "/info then says reasoning: off"

$T send-keys -t ember C-d
i=0
while [ $i -lt 50 ] && [ ! -f "$tmp/run.sh.rc" ]; do sleep 0.1; i=$((i + 1)); done
[ "$(cat "$tmp/run.sh.rc" 2>/dev/null)" = 0 ]
ok $? "Ctrl-D quits with status 0"

# --think show: the full-screen chat starts unfolded
$T new-session -d -s shown -x 160 -y 40 "$tmp/run.sh --think show" || skip "tmux cannot start a session"
wait_for_in() { i=0; while [ $i -lt $(($2 * 10)) ]; do $T capture-pane -p -t "$3" | grep -Eq "$1" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
wait_for_in 'RSS' 20 shown
$T send-keys -t shown 'hi' Enter
wait_for_in 'Nice to meet you' 30 shown && $T capture-pane -p -t shown | grep -q 'greets me' &&
    ! $T capture-pane -p -t shown | grep -q '^  thinking… ('
ok $? "--think show: the full-screen chat shows the thinking from the start"
$T kill-session -t shown 2>/dev/null

# plain line mode on a terminal (TERM=dumb): the fold's line stands where
# the thinking was, /think show prints it
sed 's/TERM=screen/TERM=dumb/' "$tmp/run.sh" > "$tmp/dumb.sh" && chmod +x "$tmp/dumb.sh"
$T new-session -d -s dumb -x 160 -y 40 "$tmp/dumb.sh; sleep 30" || skip "tmux cannot start a session"
sleep 1
$T send-keys -t dumb 'hi' Enter
wait_for_in 'tok/s' 30 dumb
$T capture-pane -p -t dumb > "$tmp/dumb.txt"
grep -q "^thinking… ($n_think tokens)\$" "$tmp/dumb.txt" && grep -q '^Hello! Nice to meet you.$' "$tmp/dumb.txt" &&
    ! grep -q 'greets me' "$tmp/dumb.txt"
ok $? "plain mode on a terminal: 'thinking… ($n_think tokens)' then the answer, the thinking not shown"
echo "# plain screen:"; sed -n '/thinking/,/tok\/s/p' "$tmp/dumb.txt" | sed 's/^/#   /'
$T send-keys -t dumb '/think show' Enter 'again' Enter
wait_for_in 'greets me' 30 dumb
ok $? "plain mode: /think show prints the next reply's thinking"
$T kill-session -t dumb 2>/dev/null
tap_end
