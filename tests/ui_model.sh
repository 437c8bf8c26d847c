#!/bin/sh
# /model in the full-screen chat, through tmux: the list of the models
# `ember models` knows ($EMBER_MODELS here), Tab completion of a name,
# loading another model with the conversation kept (its name in the status
# bar), and the refusals (no such model, a file that is not a model).
# TAP; SKIP without tmux.
name=model; . "${EMBER_SRCDIR:-.}/tests/tmux_lib.sh"
mkdir -p "$tmp/models"
"$EMBER_BIN" synth -o "$tmp/models/alpha-tiny.gguf" --like tiny -q >/dev/null 2>&1 &&
    "$EMBER_BIN" synth -o "$tmp/models/beta-gemma.gguf" --like tiny-gemma3 -q >/dev/null 2>&1 ||
    skip_all "ember synth is unavailable"
echo "not a model" > "$tmp/notes.gguf"
cat > "$tmp/run.sh" <<EOF2
#!/bin/sh
export LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
export XDG_CACHE_HOME=$tmp/cache HF_HOME=$tmp/hf EMBER_MODELS=$tmp/models TERM=screen
export EMBER_PROFILE_DIR=$SRCDIR/profiles
"$EMBER_BIN" -m "$tmp/models/alpha-tiny.gguf" -t 1 -n 6
echo \$? > "\$0.rc"
EOF2
chmod +x "$tmp/run.sh"
$T new-session -d -s ember -x 140 -y 40 "$tmp/run.sh" || skip_all "tmux cannot start a session"
wait_for 'RSS' 20 || skip_all "the chat did not start"
screen | grep 'RSS' | grep -q '^ember-synth-tiny-Q8_0 '
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

$T send-keys -t ember '/quit' Enter
sleep 0.5
[ "$(cat "$tmp/run.sh.rc" 2>/dev/null)" = 0 ]; ok $? "/quit exits 0"
tap_end
