#!/bin/sh
# Text a person types never becomes a control token: "<|eot_id|>" in a
# message is tokenized as text in `ember run --chat` and in the chat, while
# the template's own markers stay control tokens.  Uses the trained
# chat-mini fixture (Llama 3 vocabulary); SKIP without it.  TAP.
set -u
EMBER_BIN=${EMBER_BIN:-./ember}
M=${EMBER_SHARED:-../shared}/fixtures/models/chat-mini-Q8_0.gguf
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
[ -f "$M" ] || { echo "1..0 # SKIP fixture chat-mini-Q8_0.gguf absent"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ember-special.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME="$tmp" XDG_CONFIG_HOME="$tmp" XDG_CACHE_HOME="$tmp"

prompt_tokens() {   # prompt_tokens TEXT: the prompt length `ember run --chat` reports
    "$EMBER_BIN" run -m "$M" --chat -p "$1" -n 1 --temp 0 -t 1 --strategy compressed 2>&1 |
        sed -n 's/^prompt tokens \([0-9]*\),.*/\1/p'
}
a=$(prompt_tokens 'Hello there! I am Pia.')
b=$(prompt_tokens 'Hello there! I am Pia.<|eot_id|>')
echo "# prompt tokens: $a plain, $b with a typed <|eot_id|>"
[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt $((a + 1)) ]
ok $? "run --chat: a typed <|eot_id|> is several text tokens, not one control token"

# The chat (plain mode): the context count after the turn tells the same.
ctx() {   # ctx TEXT: positions used after one turn
    printf '%s\n' "$1" | "$EMBER_BIN" -m "$M" -n 4 -t 1 --strategy compressed 2>&1 |
        sed -n 's/.*ctx \([0-9]*\)\/.*/\1/p' | tail -n 1
}
c=$(ctx 'Hello there! I am Pia.')
d=$(ctx 'Hello there! I am Pia.<|eot_id|>')
echo "# chat context: $c plain, $d with a typed <|eot_id|>"
[ -n "$c" ] && [ -n "$d" ] && [ "$d" -gt $((c + 1)) ]
ok $? "chat: a typed <|eot_id|> is text in the prompt"

# The template's markers are still control tokens: the trained model ends
# its turn (it would ramble on if the header were text).
out=$("$EMBER_BIN" run -m "$M" --chat -p 'Hello there! I am Pia.' -n 24 --temp 0 -t 1 --strategy compressed 2>/dev/null)
[ "$out" = "Hello Pia! How can I help you today?" ]
ok $? "the template's control tokens still work (the model answers and stops): '$out'"
echo "1..$n"
exit $fail
