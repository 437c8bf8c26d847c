#!/bin/sh
# The chat speaks the model's own template: `ember run --chat` and the
# chat (plain mode) render tokenizer.chat_template with the Jinja
# interpreter and say so; a template that fails is replaced by the named
# built-in fallback.  The trained chat-mini (Llama 3 template) answers and
# ends its turn at <|eot_id|>; qwen3-mini and gemma3-mini use their own
# templates.  Fixture parts SKIP without ../shared.  TAP.
set -u
EMBER_BIN=${EMBER_BIN:-./ember}
S=${EMBER_SHARED:-../shared}/fixtures
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 needed to read --json"; exit 0; }
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ember-tmpl.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME="$tmp" XDG_CONFIG_HOME="$tmp" XDG_CACHE_HOME="$tmp"
RUN="$EMBER_BIN run --temp 0 -t 1 --strategy compressed"

# ---- a template that raises: the fallback is named (no fixtures needed)
printf '%s\n' "{% if messages[0].role != 'system' %}{{ raise_exception('this model wants a system prompt') }}{% endif %}" \
    "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}<|eot_id|>{% endfor %}" \
    > "$tmp/raise.jinja"
"$EMBER_BIN" synth -q -o "$tmp/raise.gguf" --like tiny --chat-template "$tmp/raise.jinja" 2>"$tmp/err"
ok $? "synth --chat-template writes a model with that template"
$RUN -m "$tmp/raise.gguf" --chat -p hi -n 2 >/dev/null 2>"$tmp/err"
grep -q '^template: llama3 (fallback: the GGUF template failed: this model wants a system prompt)$' "$tmp/err"
ok $? "run --chat: a raising template falls back, named with its message ($(head -n 1 "$tmp/err"))"
$RUN -m "$tmp/raise.gguf" --chat --system 'Be brief.' -p hi -n 2 >/dev/null 2>"$tmp/err"
grep -q '^template: gguf (jinja)$' "$tmp/err"
ok $? "the same template renders when its condition holds: gguf (jinja)"
$RUN -m "$tmp/raise.gguf" --chat -p hi -n 2 --json > "$tmp/j.json" 2>/dev/null &&
    [ "$(jget "$tmp/j.json" 'd["template"]')" = "llama3 (fallback: the GGUF template failed: this model wants a system prompt)" ]
ok $? "run --chat --json reports the template"
printf 'hi\n/info\n' | "$EMBER_BIN" -m "$tmp/raise.gguf" -n 2 -t 1 > /dev/null 2> "$tmp/chat.err"
grep -q '^ember: template: llama3 (fallback: the GGUF template failed: this model wants a system prompt)$' "$tmp/chat.err" &&
    grep -q '^template: llama3 (fallback' "$tmp/chat.err"
ok $? "the chat notes the fallback and /info shows it"
printf '{{ messages[0].content }' > "$tmp/bad.jinja"
"$EMBER_BIN" synth -q -o "$tmp/bad.gguf" --like tiny --chat-template "$tmp/bad.jinja" &&
    $RUN -m "$tmp/bad.gguf" --chat -p hi -n 2 >/dev/null 2>"$tmp/err"
grep -q '^template: llama3 (fallback: the GGUF template failed: TemplateSyntaxError at line 1' "$tmp/err"
ok $? "a template that does not parse: fallback named with the syntax error"
"$EMBER_BIN" synth -q -o "$tmp/none.gguf" --like tiny --chat-template /nonexistent.jinja 2>"$tmp/err"
[ $? = 1 ] && grep -q "cannot read the chat template '/nonexistent.jinja'" "$tmp/err"
ok $? "synth: an unreadable template file is an error naming it"

# ---- Gemma 2's template refuses a system role: it opens the first message
G2=$S/templates/google-gemma-2-2b-it.jinja
if [ -f "$G2" ]; then
    "$EMBER_BIN" synth -q -o "$tmp/g2.gguf" --like tiny --chat-template "$G2" &&
        $RUN -m "$tmp/g2.gguf" --chat --system 'Be brief.' -p hi -n 2 >/dev/null 2>"$tmp/err"
    grep -q '^template: gguf (jinja; the system prompt opens the first message: System role not supported)$' "$tmp/err"
    ok $? "Gemma 2: the system prompt goes into the first message, the template still renders ($(head -n 1 "$tmp/err"))"
else
    skip "fixture templates absent"
fi

# ---- a generation prompt that opens <think> (DeepSeek-R1 style): the
# reply starts in it
printf '%s' "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>{{ m.content }}<|eot_id|>{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|><think>
{% endif %}" > "$tmp/r1.jinja"
"$EMBER_BIN" synth -q -o "$tmp/r1.gguf" --like tiny --chat-template "$tmp/r1.jinja" &&
    printf 'hi\n' | "$EMBER_BIN" -m "$tmp/r1.gguf" -n 3 -t 1 --think show > "$tmp/r1.out" 2>/dev/null
[ "$(head -n 1 "$tmp/r1.out")" = "<think>" ]
ok $? "the chat's reply starts with the <think> its prompt opened ($(head -c 40 "$tmp/r1.out" | tr '\n' ' '))"
# folded (the default), the 3 tokens are all thinking: the tag the prompt
# opened is not one of them
printf 'hi\n' | "$EMBER_BIN" -m "$tmp/r1.gguf" -n 3 -t 1 > "$tmp/r1.out" 2>"$tmp/r1.err"
[ "$(cat "$tmp/r1.out")" = "" ] && grep -q '^thinking.* (3 tokens)$' "$tmp/r1.err"
ok $? "folded, that reply is its fold's line on stderr, counting the model's 3 tokens ($(grep thinking "$tmp/r1.err"))"

# ---- chat-mini: the Llama 3 template from the file, the answer ends at EOT
M=$S/models/chat-mini-Q8_0.gguf
if [ -f "$M" ]; then
    out=$($RUN -m "$M" --chat -p 'Hello there! I am Pia.' -n 40 2>"$tmp/err")
    grep -q '^template: gguf (jinja)$' "$tmp/err"
    ok $? "chat-mini: the GGUF's own template is used"
    [ "$out" = "Hello Pia! How can I help you today?" ]
    ok $? "chat-mini answers as trained ('$out')"
    $RUN -m "$M" --chat -p 'Hello there! I am Pia.' -n 40 --json > "$tmp/m.json" 2>/dev/null
    [ "$(jget "$tmp/m.json" 'd["generated_tokens"]')" = 14 ] && [ "$(jget "$tmp/m.json" 'd["ids"][-1]')" = 4095 ]
    ok $? "the turn ends at <|eot_id|> (14 tokens, the last 4095) well before -n 40"
    # the rendered prompts are the reference's token for token, with and
    # without a system prompt (chat-tasks.jsonl holds the reference ids)
    bad=0
    for id in 0 1 2 3 8 9; do
        line=$(sed -n "$((id + 1))p" "$S/chat-tasks.jsonl")
        printf '%s' "$line" > "$tmp/task.json"
        q=$(jget "$tmp/task.json" 'd["question"]')
        sys=$(jget "$tmp/task.json" 'd["system"] or ""')
        want=$(jget "$tmp/task.json" 'len(d["prompt_ids"])')
        if [ -n "$sys" ]; then
            $RUN -m "$M" --chat --system "$sys" -p "$q" -n 1 --json > "$tmp/t.json" 2>/dev/null
        else
            $RUN -m "$M" --chat -p "$q" -n 1 --json > "$tmp/t.json" 2>/dev/null
        fi
        got=$(jget "$tmp/t.json" 'd["prompt_tokens"]' 2>/dev/null)
        [ "$got" = "$want" ] || { echo "# task $id: $got prompt tokens, the reference $want"; bad=1; }
    done
    ok $bad "chat-mini: the Jinja-rendered prompts have the reference's lengths (6 tasks, with and without system)"
else
    for i in 1 2 3 4; do skip "fixture chat-mini-Q8_0.gguf absent"; done
fi

# ---- Qwen3 and Gemma 3: their own templates
for f in qwen3-mini-Q8_0 gemma3-mini-Q8_0; do
    M=$S/models/$f.gguf
    if [ ! -f "$M" ]; then
        skip "fixture $f.gguf absent"
        continue
    fi
    $RUN -m "$M" --chat --system 'Be brief.' -p 'Hello!' -n 4 >/dev/null 2>"$tmp/err"
    grep -q '^template: gguf (jinja)$' "$tmp/err"
    ok $? "$f: the GGUF template is used ($(head -n 1 "$tmp/err"))"
done

echo "1..$n"
exit $fail
