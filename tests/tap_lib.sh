# TAP counters shared by the shell test suites: source it first,
#   . "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
# ok STATUS DESCRIPTION prints one result and fails (returns 1) when STATUS
# is not 0, so a suite can say `ok $? "..." || show ...`; fail is 1 and
# fails counts once any result failed, so a suite ends with `exit $fail`
# or `exit $fails`.
n=0
fail=0
fails=0
ok() {
    n=$((n + 1))
    if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fails=$((fails + 1)); fi
    [ "$1" = 0 ]
}
