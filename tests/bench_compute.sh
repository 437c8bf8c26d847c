#!/bin/sh
# ember bench --compute: the int8 multiply-add peak and prefill's fraction
# of it.  The multiply-adds per token must be the plan's matrices (the LM
# head and the embedding aside), the fraction must be prefill x that / peak,
# and the instruction named must follow the ISA (EMBER_ISA=scalar).  Only
# consistency is checked, never a speed.  TAP.
set -u
BIN=${EMBER_BIN:-./ember}
. "${EMBER_SRCDIR:-.}/tests/tap_lib.sh"
[ -x "$BIN" ] || { echo "1..0 # SKIP $BIN not built"; exit 0; }
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 is not installed"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ember-compute.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
"$BIN" synth -o "$T/tiny.gguf" --like tiny -q || { echo "1..0 # SKIP synth failed"; exit 0; }

"$BIN" bench -m "$T/tiny.gguf" -p 16 -n 4 -r 1 -w 0 -t 1 --compute --json "$T/b.json" > "$T/out" 2>&1
ok $? "bench --compute runs"
grep -q '^compute: .* peak [0-9.]* GMAC/s (1 threads); prefill does' "$T/out"
ok $? "it prints the peak and the per-token work ($(grep '^compute' "$T/out"))"
"$BIN" inspect --plan --json "$T/tiny.gguf" > "$T/plan.json"
python3 - "$T/b.json" "$T/plan.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
want = sum(e["shape"][0] * (e["shape"][1] if len(e["shape"]) > 1 else 1) for e in p["plan"]
           if e.get("kernel") and e["name"] not in ("output.weight", "token_embd.weight"))
assert b["prefill_macs_per_token"] == want, (b["prefill_macs_per_token"], want)
assert b["compute_peak_gmacs"] > 0
f = b["prefill_tps"]["median"] * want / (b["compute_peak_gmacs"] * 1e9)
assert abs(b["compute_fraction"] - f) < 1e-9 * max(1, f), (b["compute_fraction"], f)
o = b["prefill_tps"]["median"] * want / (b["compute_ordered_gmacs"] * 1e9)
assert 0 < b["compute_ordered_gmacs"], b
assert abs(b["compute_ordered_fraction"] - o) < 1e-9 * max(1, o), (b["compute_ordered_fraction"], o)
PY
ok $? "multiply-adds per token are the plan's matrices; the fractions are prefill x that / peak and / ordered peak"
grep -q '^         ordered peak [0-9.]* GMAC/s' "$T/out"
ok $? "it prints the ordered peak"
EMBER_ISA=scalar "$BIN" bench -m "$T/tiny.gguf" -p 8 -n 2 -r 1 -w 0 -t 1 --compute 2>&1 | grep -q '^compute: scalar int8'
ok $? "EMBER_ISA=scalar measures the scalar multiply-add"
echo "1..$n"
exit $fails
