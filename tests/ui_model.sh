#!/bin/sh
# /model in the full-screen chat, through tmux: the list of the models
# `ember models` knows ($EMBER_MODELS here), Tab completion of a name,
# loading another model with the conversation kept (its name in the status
# bar), and the refusals (no such model, a file that is not a model);
# /model hf: of a model not cached, downloaded from tests/hf_server.py
# while the chat goes on, cancelled, resumed, and left mid-way; and
# cancelled or left while the Hub has not yet answered its file listing.
# TAP; SKIP without tmux.
name=model; . "${EMBER_SRCDIR:-.}/tests/tmux_lib.sh"
mkdir -p "$tmp/models"
"$EMBER_BIN" synth -o "$tmp/models/alpha-tiny.gguf" --like tiny -q >/dev/null 2>&1 &&
    "$EMBER_BIN" synth -o "$tmp/models/beta-gemma.gguf" --like tiny-gemma3 -q >/dev/null 2>&1 ||
    skip_all "ember synth is unavailable"
echo "not a model" > "$tmp/notes.gguf"
# the stand-in Hub (tests/hf_server.py, 127.0.0.1 only) for /model hf:...:
# test/tiny answers at once, test/slow sends 32 KiB every 50 ms,
# test/stall's listing hangs for 30 s
HUB=
if command -v python3 >/dev/null 2>&1; then
    mkdir -p "$tmp/repos/test/tiny" "$tmp/repos/test/slow" "$tmp/repos/other/slow" "$tmp/repos/test/stall"
    cp "$tmp/models/alpha-tiny.gguf" "$tmp/repos/test/tiny/tiny-Q8_0.gguf"
    "$EMBER_BIN" synth -o "$tmp/repos/test/slow/slow-Q8_0.gguf" --like tiny-qwen2 -q >/dev/null 2>&1
    cp "$tmp/repos/test/slow/slow-Q8_0.gguf" "$tmp/repos/other/slow/slow-Q8_0.gguf"
    cp "$tmp/models/alpha-tiny.gguf" "$tmp/repos/test/stall/stall-Q8_0.gguf"
    python3 "$SRCDIR/tests/hf_server.py" "$tmp/repos" "$tmp/hub.log" > "$tmp/port" 2> "$tmp/hub.err" &
    HUB=$!
    trap '[ -n "$HUB" ] && kill $HUB 2>/dev/null; cleanup' EXIT INT TERM
    i=0
    while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ -s "$tmp/port" ] || { kill $HUB 2>/dev/null; HUB=; }
fi
cat > "$tmp/run.sh" <<EOF2
#!/bin/sh
export LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
export XDG_CACHE_HOME=$tmp/cache HF_HOME=$tmp/hf EMBER_MODELS=$tmp/models TERM=screen
export EMBER_PROFILE_DIR=$SRCDIR/profiles HF_ENDPOINT=http://127.0.0.1:$(cat "$tmp/port" 2>/dev/null || echo 1)
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY HF_TOKEN HF_HUB_OFFLINE HF_HUB_CACHE
export no_proxy=127.0.0.1 NO_PROXY=127.0.0.1
"$EMBER_BIN" -m "$tmp/models/alpha-tiny.gguf" -t 1 -n 6
echo \$? > "\$0.rc"
EOF2
chmod +x "$tmp/run.sh"
$T new-session -d -s ember -x 140 -y 40 "$tmp/run.sh" || skip_all "tmux cannot start a session"
wait_for 'RSS' 20 || skip_all "the chat did not start"
# the first frames may lead with the load's progress: the name comes with the stats
wait_for '^ember-synth-tiny-Q8_0 .*RSS' 20
ok $? "the status bar names the first model"
$T send-keys -t ember 'first message' Enter
wait_for 'tok/s avg' 20

$T send-keys -t ember '/model' Enter
wait_for 'models \(ember models\): alpha-tiny.gguf beta-gemma.gguf' 5
ok $? "/model alone lists the models"
$T send-keys -t ember '/model be' Tab
wait_for '^> /model beta-gemma.gguf' 5
ok $? "Tab completes a model name"
$T send-keys -t ember Enter
wait_for 'model ember-synth-tiny-gemma3[^ ]* loaded' 20
ok $? "the new model loads and says so"
wait_for '^ember-synth-tiny-gemma3' 10
ok $? "the status bar names the new model"
screen | grep -q '^  first message'
ok $? "the conversation is kept on screen"
$T send-keys -t ember 'second message' Enter
wait_for 'ctx [0-9]+/' 10
sleep 1
ctx=$(screen | grep -Eo 'ctx [0-9]+' | tail -n 1 | grep -Eo '[0-9]+')
[ "${ctx:-0}" -gt 20 ]
ok $? "the next reply sees the whole conversation (ctx $ctx tokens)"

$T send-keys -t ember '/model nothing-like-this' Enter
wait_for 'no such file or model' 5
ok $? "an unknown name is refused"
$T send-keys -t ember "/model $tmp/notes.gguf" Enter
wait_for "/model $tmp/notes.gguf: " 5 && screen | grep -q '^ember-synth-tiny-gemma3'
ok $? "a file that is not a model is refused and the model stays"

# /model hf: not in the cache: downloaded off the UI thread, progress in
# the status bar, Esc cancels (the partial kept), the next try resumes
if [ -n "$HUB" ]; then
    blobs=$tmp/hf/hub/models--test--slow/blobs
    $T send-keys -t ember '/model hf:test/slow' Enter
    wait_for 'downloading slow-Q8_0.gguf: [0-9]+% ' 10
    ok $? "/model hf: of a model not cached downloads it, its progress in the status bar"
    echo "# status: $(screen | grep 'downloading' | tail -n 1)"
    $T send-keys -t ember 'typed meanwhile'
    wait_for '^> typed meanwhile' 3 && screen | grep -q 'downloading slow-Q8_0.gguf'
    ok $? "the chat takes keys while it downloads"
    $T send-keys -t ember Escape
    wait_for 'cancelled after .* the partial download is kept' 10
    ok $? "Esc cancels the download and says the partial is kept"
    part=$(ls "$blobs"/*.incomplete 2>/dev/null | head -n 1)
    psize=$(if [ -n "$part" ]; then wc -c < "$part" | tr -d ' '; else echo 0; fi)
    # the status line may still lead with the download's progress for a frame
    [ "$psize" -gt 0 ] && wait_for '^ember-synth-tiny-gemma3.*RSS' 5
    ok $? "the partial file stays in the cache ($psize bytes) and the model in use stays ($(screen | grep RSS | cut -c1-60))"
    $T send-keys -t ember C-u
    $T send-keys -t ember '/model hf:test/slow' Enter
    wait_for 'model ember-synth-tiny-qwen2[^ ]* loaded' 30
    ok $? "the next /model hf:test/slow finishes the download and loads the model"
    grep -q "^GET /cdn/test/slow/slow-Q8_0.gguf bytes=$psize- 206" "$tmp/hub.log" && ! ls "$blobs"/*.incomplete >/dev/null 2>&1
    ok $? "it resumed from byte $psize (a Range request), no partial left"
    wait_for '^ember-synth-tiny-qwen2' 10
    ok $? "the status bar names the downloaded model"
    $T send-keys -t ember '/model hf:test/none' Enter
    wait_for '/model hf:test/none: .*no such repository' 10
    ok $? "a repository the Hub does not have is reported"
    # Esc while the Hub has not yet answered the listing stops that too
    $T send-keys -t ember '/model hf:test/stall' Enter
    wait_for 'asking the Hub' 5 && sleep 0.5
    $T send-keys -t ember Escape
    wait_for '/model hf:test/stall: .*cancelled' 3
    ok $? "Esc during the Hub's file listing cancels it within 3 s"
    wait_for '^ember-synth-tiny-qwen2.*RSS' 5 && wait_gone 'asking the Hub' 5
    ok $? "the model in use stays and the status line is clear again"
    $T send-keys -t ember 'after the stall' Enter
    # (up to 30 s: under ASan beside the other suites a reply is slow)
    wait_for '^  after the stall' 10
    i=0
    # the reply's text, not only its header (shown before the first token)
    replied() { screen | grep -A 3 '^  after the stall' | grep -A 1 '^assistant' | grep -q '^  [^ ]'; }
    while [ $i -lt 300 ] && ! replied; do sleep 0.1; i=$((i + 1)); done
    replied
    r=$?
    [ $r = 0 ] || screen | sed 's/^/# /'
    ok $r "the chat still answers after the cancelled listing"
else
    skip "python3 or the stand-in Hub is unavailable"
fi

$T send-keys -t ember '/quit' Enter
sleep 0.5
[ "$(cat "$tmp/run.sh.rc" 2>/dev/null)" = 0 ]; ok $? "/quit exits 0"

# leaving in the middle of a download stops it at once, the partial kept
if [ -n "$HUB" ]; then
    rm -f "$tmp/run.sh.rc"
    $T new-session -d -s quit -x 140 -y 40 "$tmp/run.sh" && wait_for 'RSS' 20 quit
    $T send-keys -t quit '/model hf:other/slow' Enter
    wait_for 'downloading slow-Q8_0.gguf: [0-9]+% ' 10 quit
    $T send-keys -t quit '/quit' Enter
    i=0
    while [ $i -lt 30 ] && [ ! -f "$tmp/run.sh.rc" ]; do sleep 0.1; i=$((i + 1)); done
    [ "$(cat "$tmp/run.sh.rc" 2>/dev/null)" = 0 ] && ls "$tmp"/hf/hub/models--other--slow/blobs/*.incomplete >/dev/null 2>&1
    ok $? "/quit during a download exits 0 within 3 s, the partial kept"
    # and in the middle of a listing the Hub has not answered yet
    rm -f "$tmp/run.sh.rc"
    $T new-session -d -s stall -x 140 -y 40 "$tmp/run.sh" && wait_for 'RSS' 20 stall
    $T send-keys -t stall '/model hf:test/stall' Enter
    wait_for 'asking the Hub' 5 stall && sleep 0.5
    $T send-keys -t stall '/quit' Enter
    i=0
    while [ $i -lt 30 ] && [ ! -f "$tmp/run.sh.rc" ]; do sleep 0.1; i=$((i + 1)); done
    [ "$(cat "$tmp/run.sh.rc" 2>/dev/null)" = 0 ]
    ok $? "/quit while the Hub's listing hangs exits 0 within 3 s"
    # /model hf: means what -m hf: means: refs/main's file, not a projector
    # beside it nor the copy in an older snapshot ("2 models match" before)
    snap=$(ls -d "$tmp"/hf/hub/models--test--slow/snapshots/* | head -n 1)
    ln -s "$(readlink "$snap/slow-Q8_0.gguf")" "$snap/mmproj-slow-f16.gguf" &&
        cp -a "$snap" "${snap%/*}/0000000000000000000000000000000000000000"
    $T new-session -d -s pick -x 140 -y 40 "$tmp/run.sh" && wait_for 'RSS' 20 pick
    $T send-keys -t pick '/model hf:test/slow' Enter
    wait_for 'model ember-synth-tiny-qwen2[^ ]* loaded' 20 pick
    ok $? "/model hf:USER/REPO beside a projector and an older snapshot loads the model ($(screen pick | grep -m1 'match\|/model' | cut -c1-80))"
    $T send-keys -t pick '/quit' Enter
else
    skip "python3 or the stand-in Hub is unavailable"
fi
tap_end
