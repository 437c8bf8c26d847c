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
# a mixture of experts: a token runs n_used of each expert tensor's n
# experts, so its multiply-adds and the roofline's bytes count those only
if "$BIN" synth -o "$T/moe.gguf" --like tiny-qwen3moe -q; then
    "$BIN" bench -m "$T/moe.gguf" -p 8 -n 4 -r 1 -w 0 -t 1 --compute --roofline --json "$T/m.json" > /dev/null 2>&1 &&
        "$BIN" inspect --plan --json "$T/moe.gguf" > "$T/mplan.json" &&
        python3 - "$T/m.json" "$T/mplan.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
ex = [e for e in p["plan"] if "_exps." in e["name"]]
assert len(ex) == 6 and all(e["token_matrices"] == 2 and len(e["shape"]) == 3 and e["shape"][2] == 8 for e in ex), ex
assert all(e["token_bytes"] * 4 == e["resident_bytes"] for e in ex), ex
mats = [e for e in p["plan"] if e.get("kernel")]
want = sum(e["shape"][0] * e["shape"][1] * e["token_matrices"] for e in mats
           if e["name"] not in ("output.weight", "token_embd.weight"))
assert b["prefill_macs_per_token"] == want, (b["prefill_macs_per_token"], want)
assert b["decode_bytes_per_token"] == sum(e["token_bytes"] for e in mats), b["decode_bytes_per_token"]
assert b["decode_bytes_per_token"] < sum(e["resident_bytes"] for e in mats)
PY
    ok $? "an MoE model: 2 of 8 experts a token in the multiply-adds per token and the roofline's bytes per token"
else
    ok 1 "synth tiny-qwen3moe"
fi
echo "1..$n"
exit $fails
