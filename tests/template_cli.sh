#!/bin/sh
# ember template: rendering from --file and from a model's metadata (the
# model cases SKIP without ../shared), the switches, and the exit statuses
# and messages of failing templates and bad input.
set -u
BIN=${EMBER_BIN:-./ember}
SHARED=${EMBER_SHARED:-}
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }

if [ ! -x "$BIN" ]; then echo "1..0 # SKIP $BIN not built"; exit 0; fi
T=$(mktemp -d "${TMPDIR:-/tmp}/ember-template.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

cat >"$T/t.jinja" <<'EOF'
{{- bos_token -}}
{% for m in messages %}
<{{ m.role }}>{{ m.content }}</{{ m.role }}>
{% endfor %}
{% if add_generation_prompt %}<assistant>{% endif %}
EOF
cat >"$T/m.json" <<'EOF'
[{"role": "system", "content": "Be brief."},
 {"role": "user", "content": "Grüße \"quoted\"\nline two"}]
EOF

# run ARGS...: stdout to $T/out, stderr to $T/err, status to $rc
run() { "$BIN" template "$@" >"$T/out" 2>"$T/err"; rc=$?; }

"$BIN" template --help >"$T/out" 2>&1
ok $? "--help exits 0"
grep -q -- "--messages" "$T/out"
ok $? "--help lists --messages"

run --file "$T/t.jinja" --messages "$T/m.json" --bos '<s>'
printf '<s><system>Be brief.</system>\n<user>Grüße "quoted"\nline two</user>\n<assistant>' >"$T/want"
[ $rc -eq 0 ] && cmp -s "$T/out" "$T/want"
ok $? "--file renders the conversation with the generation prompt, no trailing newline"

run --file "$T/t.jinja" --messages "$T/m.json" --no-generation-prompt
printf '<system>Be brief.</system>\n<user>Grüße "quoted"\nline two</user>\n' >"$T/want"
[ $rc -eq 0 ] && cmp -s "$T/out" "$T/want"
ok $? "--no-generation-prompt leaves the assistant turn closed; no --bos: bos_token undefined"

printf '{{ bos_token }}|{{ eos_token }}|{{ strftime_now("%%d %%b %%Y %%H:%%M") }}|{{ enable_thinking }}' >"$T/v.jinja"
run --file "$T/v.jinja" --messages "$T/m.json" --bos B --eos E --now 2026-12-02T12:30:00 --var enable_thinking=false
[ $rc -eq 0 ] && [ "$(cat "$T/out")" = "B|E|02 Dec 2026 12:30|False" ]
ok $? "--bos, --eos, --now and --var reach the template ($(cat "$T/out"))"

printf '{"messages": [{"role": "user", "content": "x"}], "tools": [{"name": "f"}], "add_generation_prompt": false}' >"$T/obj.json"
printf '{{ tools[0].name }}{{ messages|length }}{{ add_generation_prompt }}' >"$T/o.jinja"
run --file "$T/o.jinja" --messages "$T/obj.json"
[ $rc -eq 0 ] && [ "$(cat "$T/out")" = "f1False" ]
ok $? "an object of variables: tools and add_generation_prompt come from the file"

printf '[{"role": "user", "content": [{"type": "text", "text": "part"}, 7, null]}]' >"$T/any.json"
printf '{{ messages[0].content[0].text }}{{ messages[0].content[1] + 1 }}{{ messages[0].content[2] }}' >"$T/a.jinja"
run --file "$T/a.jinja" --messages "$T/any.json"
[ $rc -eq 0 ] && [ "$(cat "$T/out")" = "part8None" ]
ok $? "content may be any JSON value"

printf '{%% if messages[0].role == "system" %%}{{ raise_exception("System role not supported") }}{%% endif %%}ok' >"$T/r.jinja"
run --file "$T/r.jinja" --messages "$T/m.json"
[ $rc -eq 1 ] && [ "$(cat "$T/err")" = "ember: template: System role not supported" ] && [ ! -s "$T/out" ]
ok $? "raise_exception: exit 1, 'ember: template: MESSAGE' on stderr, nothing on stdout (rc $rc)"

printf 'a\n{%% for x in y %%}\n{{ x }' >"$T/bad.jinja"
run --file "$T/bad.jinja" --messages "$T/m.json"
[ $rc -eq 1 ] && grep -q "bad.jinja:3: " "$T/err"
ok $? "a syntax error: exit 1 with the file and line ($(cat "$T/err"))"

printf '{%% for i in range(100000) %%}{%% for j in range(100000) %%}{%% endfor %%}{%% endfor %%}' >"$T/loop.jinja"
run --file "$T/loop.jinja" --messages "$T/m.json"
[ $rc -eq 1 ] && grep -q "step budget" "$T/err"
ok $? "an endless loop stops at the step budget with exit 1"

printf '[{"role": "user", "content": "x"},]' >"$T/bad.json"
run --file "$T/t.jinja" --messages "$T/bad.json"
[ $rc -eq 2 ] && grep -q "bad.json: bad JSON at line 1 column" "$T/err"
ok $? "bad JSON: exit 2 with where ($(cat "$T/err"))"

run --file "$T/missing.jinja" --messages "$T/m.json"
[ $rc -eq 2 ] && grep -q "cannot read template" "$T/err"
ok $? "a missing template file: exit 2"

run --file "$T/t.jinja" --messages "$T/missing.json"
[ $rc -eq 2 ] && grep -qx "ember template: cannot read messages '$T/missing.json': No such file or directory" "$T/err"
ok $? "a missing messages file: exit 2, the reason given ($(cat "$T/err"))"

# why a file does not read is said (a directory was only "cannot read")
run --file "$T" --messages "$T/m.json"
[ $rc -eq 2 ] && grep -qx "ember template: cannot read template '$T': Is a directory" "$T/err"
ok $? "a directory as the template: exit 2, says it is one ($(cat "$T/err"))"
printf 'GGUF\003\000\000\000{{ x }}' > "$T/bin.jinja"
run --file "$T/bin.jinja" --messages "$T/m.json"
[ $rc -eq 2 ] && grep -qx "ember template: '$T/bin.jinja' is not text (a NUL byte or not UTF-8)" "$T/err"
ok $? "a binary template file is refused, not rendered as text ($(cat "$T/err"))"

run --messages "$T/m.json"
[ $rc -eq 2 ]
ok $? "no template: usage error"

run --file "$T/t.jinja"
[ $rc -eq 2 ]
ok $? "no --messages: usage error"

run --file "$T/t.jinja" --messages "$T/m.json" --now yesterday
[ $rc -eq 2 ] && grep -q "ISO 8601" "$T/err"
ok $? "a bad --now: usage error"

run --file "$T/t.jinja" --messages "$T/m.json" --bogus
[ $rc -eq 2 ]
ok $? "an unknown option: usage error"

run --file "$T/t.jinja" --messages - <"$T/m.json"
[ $rc -eq 0 ] && grep -q "Be brief" "$T/out"
ok $? "--messages - reads standard input"

MODEL=${SHARED:+$SHARED/fixtures/models/llama-mini-Q8_0.gguf}
if [ -n "$MODEL" ] && [ -f "$MODEL" ]; then
    run -m "$MODEL" --messages "$T/m.json" --now 2026-12-02
    printf 'assistant<|end_header_id|>\n\n' >"$T/want"
    tail -c "$(wc -c <"$T/want")" "$T/out" >"$T/tail"
    [ $rc -eq 0 ] && head -c 60 "$T/out" | grep -q '^<|begin_of_text|><|start_header_id|>system<|end_header_id|>' &&
        cmp -s "$T/tail" "$T/want"
    ok $? "-m: the model's template with its BOS string, ending in the assistant header"
    run -m "$MODEL" --messages "$T/m.json" --file "$T/t.jinja"
    [ $rc -eq 2 ]
    ok $? "-m and --file together: usage error"
else
    skip "-m: ../shared/fixtures/models/llama-mini-Q8_0.gguf not found"
    skip "-m with --file: no model"
fi

echo "1..$n"
[ $fails -eq 0 ]
