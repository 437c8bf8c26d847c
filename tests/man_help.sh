#!/bin/sh
# Every option that `ember COMMAND --help` offers is documented in
# man/ember.1, and every subcommand has its --help.
set -u
EMBER=${EMBER_BIN:-./ember}
MAN=${EMBER_SRCDIR:-.}/man/ember.1
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
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
# lacking TEXT GREP-FLAGS ITEM...: the items TEXT has no line for (grep
# GREP-FLAGS, "" for none), quoted, in $missing, and how many were asked in $count
lacking() {
    text=$1 flags=$2
    shift 2
    missing="" count=0
    for item; do
        count=$((count + 1))
        printf '%s\n' "$text" | grep -q $flags -- "$item" || missing="$missing '$item'"
    done
}
# the key table (ui/keys.c), as `ember chat --help` prints it, is in the KEYS section
keys=$("$EMBER" chat --help | sed -n '/^Keys:/,/^[^ ]/p' | sed -n 's/^  \([^ ][^ ]*\) .*/\1/p' | grep -v '^editing$')
section=$(sed -n '/^\.SH KEYS/,/^\.SH /p' "$MAN" | sed 's/\\-/-/g')
lacking "$section" "" $keys; nk=$count
[ "$nk" -ge 10 ] && [ -z "$missing" ]; ok $? "every key of the key table ($nk) is in ember(1) KEYS (missing:$missing)"
SRC=${EMBER_SRCDIR:-.}
# the slash-command table (ui/slash.c): each command, with its arguments as
# the table gives them, is an entry of the SLASH COMMANDS section
section=$(sed -n '/^\.SH SLASH COMMANDS/,/^\.SH /p' "$MAN" | grep '^\.BI\{0,1\} /' |
          sed 's/\\f[RPBI]//g; s/\\-/-/g; s/"//g; s/^\.BI\{0,1\} //; s/  */ /g; s/ $//')
rows=$(sed -n 's/^ *{"\(\/[a-z]*\)", "\([^"]*\)",.*/\1 \2/p' "$SRC/ui/slash.c" | sed 's/ $//')
nl='
'
oldifs=$IFS; IFS=$nl
lacking "$section" -xF $rows; nc=$count
IFS=$oldifs
[ "$nc" -ge 15 ] && [ -z "$missing" ]; ok $? "every slash command of the table ($nc), with its arguments, is in ember(1) SLASH COMMANDS (missing:$missing)"
# PLAIN LINE MODE names exactly the commands the table lets plain mode run
plain=$(sed -n '/^\.SH PLAIN LINE MODE/,/^\.SH /p' "$MAN" | sed -n 's/^\.BR\{0,1\} \(\/[a-z]*\).*/\1/p' | sort -u)
table=$(tr -d '\n' < "$SRC/ui/slash.c" |
        grep -o '{"/[a-z]*", "[^"]*", "[^"]*", SL_[A-Z]*, *UI_ARG_[A-Z]*, *true' | sed 's/^{"\(\/[a-z]*\)".*/\1/' | sort -u)
[ -n "$table" ] && [ "$plain" = "$table" ]
ok $? "ember(1) PLAIN LINE MODE lists the plain-mode commands of the table (man: $(echo $plain); table: $(echo $table))"
# the FILES section names every place the code keeps files in: Ember's own
# (engine/sys/xdg.c's table, as $XDG_*_HOME/ember/NAME) and huggingface_hub's
# (src/tools/hf_cache.c's tables, as $VAR/SUFFIX with $HOME as ~)
files=$(sed -n '/^\.SH FILES/,/^\.SH /p' "$MAN" | sed 's/\\f[RPBI]//g; s/\\-/-/g; s/\\(ti/~/g; s/\\ti/~/g')
places=$(sed -n 's/^ *\[EMBER_PLACE_[A-Z]*\] = {EMBER_XDG_\([A-Z]*\), "\([^"]*\)"},$/$XDG_\1_HOME\/ember\/\2/p' \
             "$SRC/engine/sys/xdg.c"
         sed -n 's/^ *{"\([A-Z_]*\)", "\([^"]*\)"},$/$\1\2/p' "$SRC/src/tools/hf_cache.c" | sed 's/^\$HOME/~/')
lacking "$files" -F $places; np=$count
[ "$np" -ge 12 ] && [ -z "$missing" ]; ok $? "ember(1) FILES names every place of the code's tables ($np) (missing:$missing)"
# the option table: both commands that take it offer every option of it
missing=""
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
