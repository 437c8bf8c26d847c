#!/bin/sh
# `ember profiles`: listing, shadowing, invalid files, show -m on fixtures.
bin=${EMBER_BIN:-./ember}
src=${EMBER_SRCDIR:-..}
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }

if [ ! -x "$bin" ]; then echo "1..0 # SKIP no ember binary at $bin"; exit 0; fi
tmp=$(mktemp -d /tmp/ember-cli-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME="$tmp/config" EMBER_PROFILE_DIR="$src/profiles"

"$bin" profiles >"$tmp/out" 2>&1; rc=$?
c=$(grep -cE '^(auto|eager|compressed|packed|packed-lean|low-memory) ' "$tmp/out")
[ $rc = 0 ] && [ "$c" = 6 ]; ok $? "lists the 6 shipped profiles"

mkdir -p "$tmp/config/ember/profiles"
printf 'description: mine\nrules:\n  - match: {}\n    strategy: eager\n' \
    >"$tmp/config/ember/profiles/auto.yaml"
"$bin" profiles >"$tmp/out" 2>&1
grep -q 'auto.yaml (user, overrides shipped)' "$tmp/out" &&
    grep -q 'auto.yaml (shipped, hidden by a user profile)' "$tmp/out"
ok $? "a user profile shadowing a shipped one is marked"

"$bin" profiles show auto >"$tmp/out" 2>&1
grep -q 'description: "mine"' "$tmp/out"; ok $? "show NAME picks the user profile"

printf 'rules:\n  - match: {}\n    stratgy: eager\n' >"$tmp/bad.yaml"
"$bin" profiles show "$tmp/bad.yaml" >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "bad.yaml:3:5: unknown key 'stratgy' in a rule (did you mean 'strategy'?)" "$tmp/out"
ok $? "an invalid file is reported with line:column and a suggestion"

cp "$tmp/bad.yaml" "$tmp/config/ember/profiles/broken.yaml"
"$bin" profiles >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q 'INVALID: .*broken.yaml:3:5' "$tmp/out"
ok $? "the list marks invalid profiles and fails"
rm -f "$tmp/config/ember/profiles/broken.yaml" "$tmp/config/ember/profiles/auto.yaml"

"$bin" profiles show nope >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "no profile named 'nope'" "$tmp/out"; ok $? "unknown name fails clearly"

"$bin" profiles --help >"$tmp/out" 2>&1; rc=$?
[ $rc = 0 ] && grep -q 'ember profiles show' "$tmp/out"; ok $? "--help"

models="${EMBER_SHARED:-../shared}/fixtures/models"
if [ -f "$models/llama-mini-Q8_0.gguf" ] && [ -f "$models/qwen2-mini-Q4_K_M.gguf" ]; then
    "$bin" profiles show auto -m "$models/llama-mini-Q8_0.gguf" >"$tmp/out" 2>&1; rc=$?
    [ $rc = 0 ] && grep -q '^matched: rule 1' "$tmp/out" && grep -q 'strategy: packed' "$tmp/out" &&
        grep -q 'projections: all,' "$tmp/out"
    ok $? "auto on llama Q8_0: rule 1, all seven projections packed"
    if grep -Eq '^ +packed +[0-9]+ tensors' "$tmp/out"; then ok 0 "plan summary shows packed tensors"
    else skip "plan has no packed tensors (CPU without AVX-512 VNNI?)"; fi
    "$bin" profiles show auto -m "$models/qwen2-mini-Q4_K_M.gguf" >"$tmp/out" 2>&1; rc=$?
    [ $rc = 0 ] && grep -q '^matched: rule 2' "$tmp/out" && grep -q 'strategy: packed' "$tmp/out" &&
        grep -q 'file type Q4_K_M' "$tmp/out"
    ok $? "auto on qwen2 Q4_K_M: rule 2 (dtype Q[456]_K*), packed"
else
    skip "fixtures absent: ../shared not available"
fi
# a profile's system: prompt reaches the chat (plain mode here; the saved
# conversation shows what the model was given); --system wins over it
printf 'description: with a system prompt\nsystem: "You are a pirate."\nrules:\n  - match: {}\n    strategy: compressed\n' \
    > "$tmp/config/ember/profiles/sysp.yaml"
echo hi | XDG_STATE_HOME="$tmp/st1" EMBER_FAKE_ENGINE=1 "$bin" -m fake.gguf --profile sysp >/dev/null 2>"$tmp/e1"
grep -qh '"system": "You are a pirate."' "$tmp/st1/ember/chats/"*.json 2>/dev/null
ok $? "a profile's system: prompt is the chat's system prompt ($(head -c 200 "$tmp/e1"))"
echo hi | XDG_STATE_HOME="$tmp/st2" EMBER_FAKE_ENGINE=1 "$bin" -m fake.gguf --profile sysp --system "Be brief." >/dev/null 2>&1
grep -qh '"system": "Be brief."' "$tmp/st2/ember/chats/"*.json 2>/dev/null
ok $? "--system wins over the profile's"
# a path that is there but not a file is not "no such profile file"
"$bin" profiles show "$tmp/" >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -qxF "ember profiles: $tmp/: not a regular file, so not a profile" "$tmp/out"
ok $? "show DIR/: not a regular file ($(cat "$tmp/out"))"
"$bin" profiles show "$tmp/none.yaml" >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -qxF "ember profiles: $tmp/none.yaml: no such profile file (No such file or directory)" "$tmp/out"
ok $? "show a missing file: no such profile file ($(cat "$tmp/out"))"
# show -m with a model that does not read prints nothing on stdout (it printed
# the whole profile, then the error); an unknown option names the command's --help
"$bin" profiles show auto -m "$tmp/none.gguf" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -qxF "ember profiles: $tmp/none.gguf: No such file or directory" "$tmp/err"
ok $? "show NAME -m MISSING: the error alone (rc $rc: $(cat "$tmp/err"), $(wc -l < "$tmp/out") lines out)"
"$bin" profiles --bogus >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -qxF "ember profiles: unknown option '--bogus' (try ember profiles --help)" "$tmp/err"
ok $? "an unknown option: (try ember profiles --help) ($(cat "$tmp/err"))"
# "--" ends the options (it was "unknown option '--'")
cp "$tmp/bad.yaml" "$tmp/-dash.yaml"
case $bin in /*) b=$bin ;; *) b=$PWD/$bin ;; esac
(cd "$tmp" && "$b" profiles show -- -dash.yaml) >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q -- "-dash.yaml:3:5: unknown key 'stratgy'" "$tmp/out"
ok $? "profiles show -- -dash.yaml reads the file ($(head -n 1 "$tmp/out"))"
# --profile '' is refused by the chat as by run (the chat ran without a profile)
echo hi | XDG_STATE_HOME="$tmp/st3" EMBER_FAKE_ENGINE=1 "$bin" -m fake.gguf --profile '' >/dev/null 2>"$tmp/e3"; rc=$?
[ $rc = 1 ] && grep -qx "ember: profile: empty profile name" "$tmp/e3"
ok $? "chat --profile '': refused (rc $rc: $(cat "$tmp/e3"))"
echo "1..$n"
exit $fail
