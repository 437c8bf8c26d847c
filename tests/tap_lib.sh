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

# folded BIN FILE WHAT: one result, whether FILE is already in 2 MiB
# page-cache folios, that is whether `BIN recache FILE` finds as much of
# it mapped 2 MiB at a time before its re-read as after.  SKIP where the
# kernel or filesystem keeps no large folios (nothing after either).
folded() {
    _out=$("$1" recache "$2" 2>&1)
    _fol=$(printf '%s\n' "$_out" | sed -n 's/^mapped 2 MiB at a time: before \([0-9.]*\) MiB, after \([0-9.]*\) MiB.*/\1 \2/p')
    case "$_fol" in
    "") ok 1 "$3: recache failed: $_out" ;;
    *" 0.0") n=$((n + 1)); echo "ok $n # SKIP no 2 MiB page-cache folios for $2 here" ;;
    *) [ "${_fol% *}" = "${_fol#* }" ]
       ok $? "$3 is already in 2 MiB folios (MiB of it so mapped before and after a recache: $_fol)" ;;
    esac
}
