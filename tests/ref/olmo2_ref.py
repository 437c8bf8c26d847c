# The reference rows of test_arch_variants' olmo2 cases (tests/arch_variants_ref.h),
# since ik_llama.cpp has no olmo2: an f64 numpy reading of llama.cpp's olmo2 graph
# (src/models/olmo2.cpp).  No pre-norms; Q and K RMS-normed over their whole
# projection; NEOX rope (the sliding layers without the file's scaling); attention at
# 1/sqrt(hd), a standard window on sliding layers; x += post_norm(attn);
# x += post_norm(ffn(x)); the output norm and LM head.
# usage: GGUF_PY=DIR python3 olmo2_ref.py MODEL.gguf IDS OUT.f32  (DIR: gguf-py of a llama.cpp tree)
import sys, math
import os
sys.path.insert(0, os.environ.get('GGUF_PY', '/work/ref/ik_llama.cpp/gguf-py'))
import numpy as np
from gguf import GGUFReader
r = GGUFReader(sys.argv[1])
T = {t.name: np.array(t.data, dtype=np.float64) for t in r.tensors}
def kv(k, d=None):
    f = r.fields.get('olmo2.' + k)
    return d if f is None else f.parts[f.data[0]][0]
E = int(kv('embedding_length')); H = int(kv('attention.head_count')); HKV = int(kv('attention.head_count_kv'))
L = int(kv('block_count')); eps = float(kv('attention.layer_norm_rms_epsilon')); base = float(kv('rope.freq_base'))
hd = E // H; win = int(kv('attention.sliding_window', 0)); per = int(kv('attention.sliding_window_pattern', 4))
fac = float(kv('rope.scaling.factor', 1.0)); octx = int(kv('rope.scaling.original_context_length', 4096))
yarn = r.fields.get('olmo2.rope.scaling.type') is not None
ids = [int(x) for x in open(sys.argv[2]).read().split()]
n = len(ids); pos = np.arange(n, dtype=np.float64)
def rms(x, w): return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w
def cd(beta): return hd * math.log(octx / (beta * 2 * math.pi)) / (2 * math.log(base))
lo, hi = max(0, math.floor(cd(32))), min(hd - 1, math.ceil(cd(1)))
def rope(x, scaled):  # NEOX: pairs (i, i + hd/2); x [n, heads, hd]
    i = np.arange(hd // 2); te = pos[:, None] * base ** (-2 * i / hd)
    ms = 1.0
    if scaled and yarn and fac != 1:
        ti = te / fac; y = (i - lo) / max(0.001, hi - lo); ramp = 1 - np.clip(y, 0, 1)
        th = ti * (1 - ramp) + te * ramp; ms = 1 + 0.1 * math.log(fac)
    elif scaled and fac != 1:
        th = te / fac
    else:
        th = te
    c, s = (np.cos(th) * ms)[:, None, :], (np.sin(th) * ms)[:, None, :]
    a, b = x[..., :hd // 2], x[..., hd // 2:]
    return np.concatenate([a * c - b * s, a * s + b * c], -1)
def silu(x): return x / (1 + np.exp(-x))
x = T['token_embd.weight'][ids]
for l in range(L):
    p = f'blk.{l}.'
    swa = win > 0 and per > 0 and l % per != per - 1
    q = rms(x @ T[p + 'attn_q.weight'].T, T[p + 'attn_q_norm.weight']).reshape(n, H, hd)
    k = rms(x @ T[p + 'attn_k.weight'].T, T[p + 'attn_k_norm.weight']).reshape(n, HKV, hd)
    v = (x @ T[p + 'attn_v.weight'].T).reshape(n, HKV, hd)
    q, k = rope(q, not swa), rope(k, not swa)
    k = np.repeat(k, H // HKV, 1); v = np.repeat(v, H // HKV, 1)
    sc = np.einsum('thd,shd->hts', q, k) / math.sqrt(hd)
    m = np.triu(np.full((n, n), -np.inf), 1)
    if swa:
        for t in range(n):
            for s_ in range(n):
                if t - s_ >= win: m[t, s_] = -np.inf
    sc = sc + m
    sc = np.exp(sc - sc.max(-1, keepdims=True)); sc /= sc.sum(-1, keepdims=True)
    o = np.einsum('hts,shd->thd', sc, v).reshape(n, H * hd) @ T[p + 'attn_output.weight'].T
    x = x + rms(o, T[p + 'post_attention_norm.weight'])
    f = (silu(x @ T[p + 'ffn_gate.weight'].T) * (x @ T[p + 'ffn_up.weight'].T)) @ T[p + 'ffn_down.weight'].T
    x = x + rms(f, T[p + 'post_ffw_norm.weight'])
out = rms(x, T['output_norm.weight']) @ T['output.weight'].T
open(sys.argv[3], 'wb').write(out.astype(np.float32).tobytes())
