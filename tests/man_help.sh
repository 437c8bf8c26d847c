#!/bin/sh
# Every option that `ember COMMAND --help` offers is documented in
# man/ember.1, and every subcommand has its --help.
set -u
EMBER=${EMBER_BIN:-./ember}
MAN=${EMBER_SRCDIR:-.}/man/ember.1
n=0
fails=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi; }
[ -f "$MAN" ] || { echo "1..0 # SKIP man/ember.1 not found"; exit 0; }
for c in run eval inspect tokenize template synth bench profiles recache chat chats pull models cache; do
    out=$("$EMBER" $c --help 2>&1); r=$?
    ok $r "ember $c --help exits 0"
    missing=""
    for o in $(printf '%s\n' "$out" | grep -Eo -- '--[a-z][a-z-]+' | sort -u); do
        grep -q -- "$(echo "$o" | sed 's/-/\\\\-/g')" "$MAN" || missing="$missing $o"
    done
    [ -z "$missing" ]; ok $? "ember $c: every --help option is in ember(1) (missing:$missing)"
    grep -q "^\.SS ember $c\|^\.B ember chat\|^\.SH CHAT" "$MAN"; ok $? "ember(1) has a section for ember $c"
done
# the key table (ui/keys.c), as `ember chat --help` prints it, is in the KEYS section
keys=$("$EMBER" chat --help | sed -n '/^Keys:/,/^[^ ]/p' | sed -n 's/^  \([^ ][^ ]*\) .*/\1/p' | grep -v '^editing$')
section=$(sed -n '/^\.SH KEYS/,/^\.SH /p' "$MAN" | sed 's/\\-/-/g')
missing=""; nk=0
for k in $keys; do
    nk=$((nk + 1))
    printf '%s\n' "$section" | grep -q -- "$k" || missing="$missing $k"
done
[ "$nk" -ge 10 ] && [ -z "$missing" ]; ok $? "every key of the key table ($nk) is in ember(1) KEYS (missing:$missing)"
# the option table: both commands that take it offer every option of it
for o in --temp --top-k --top-p --min-p --repeat-penalty --repeat-last-n --seed --n-predict --ctx --threads --kv-cache --pack-cache; do
    for c in run chat; do
        "$EMBER" $c --help | grep -q -- "$o " || missing="$missing $c:$o"
    done
done
[ -z "$missing" ]; ok $? "run and chat --help list every option of the table (missing:$missing)"
"$EMBER" --help > /dev/null; ok $? "ember --help exits 0"
"$EMBER" nosuchcommand > /dev/null 2>&1; r=$?
[ $r = 2 ]; ok $? "an unknown command is a usage error (rc $r)"
echo "1..$n"
[ $fails = 0 ]
