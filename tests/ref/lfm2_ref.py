# The reference rows of test_arch_variants' lfm2 case (tests/arch_variants_ref.h),
# since ik_llama.cpp has no lfm2: an f64 numpy reading of llama.cpp's lfm2 graph
# (src/models/lfm2.cpp).  Each layer: RMSNorm (attn_norm), then a short convolution
# (layers whose head_count_kv is 0: B, C, x = in_proj h; bx = B * x; y = C * conv(bx),
# the causal depthwise conv of width l_cache over the rows of bx, oldest tap first;
# out_proj y) or attention (per-head RMSNorm of Q and K, NEOX rope, 1/sqrt(hd));
# x += that; x += ffn(RMSNorm(x) * ffn_norm); then token_embd_norm and the tied head.
# lfm2moe: after leading_dense_block_count dense FFNs, experts: p = sigmoid(router h)
# (its gating func 2), the expert_used_count best of p + exp_probs_b, weighed by their p
# renormalised; their SwiGLU outputs summed.
# usage: GGUF_PY=DIR python3 lfm2_ref.py MODEL.gguf IDS OUT.f32  (DIR: gguf-py of a llama.cpp tree)
import sys, math, os
sys.path.insert(0, os.environ.get('GGUF_PY', '/work/ref/ik_llama.cpp/gguf-py'))
import numpy as np
from gguf import GGUFReader
r = GGUFReader(sys.argv[1])
T = {t.name: np.array(t.data, dtype=np.float64) for t in r.tensors}
A = bytes(r.fields['general.architecture'].parts[-1]).decode()   # lfm2, or lfm2moe
def kv(k, d=None):
    f = r.fields.get(A + '.' + k)
    return d if f is None else f.parts[f.data[0]][0]
f = r.fields[A + '.attention.head_count_kv']
KV = [int(f.parts[i][0]) for i in f.data]
E = int(kv('embedding_length')); H = int(kv('attention.head_count')); L = int(kv('block_count'))
eps = float(kv('attention.layer_norm_rms_epsilon')); base = float(kv('rope.freq_base', 10000.0))
K = int(kv('shortconv.l_cache')); hd = E // H
ids = [int(x) for x in open(sys.argv[2]).read().split()]
n = len(ids); pos = np.arange(n, dtype=np.float64)
def rms(x, w): return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w
def rope(x):  # NEOX over the head: pairs (i, i + hd/2); x [n, heads, hd]
    i = np.arange(hd // 2); th = pos[:, None] * base ** (-2 * i / hd)
    c, s = np.cos(th)[:, None, :], np.sin(th)[:, None, :]
    a, b = x[..., :hd // 2], x[..., hd // 2:]
    return np.concatenate([a * c - b * s, a * s + b * c], -1)
def silu(x): return x / (1 + np.exp(-x))
x = T['token_embd.weight'][ids]
for l in range(L):
    p = f'blk.{l}.'
    h = rms(x, T[p + 'attn_norm.weight'])
    if KV[l] == 0:
        bcx = h @ T[p + 'shortconv.in_proj.weight'].T
        B, C, X = bcx[:, :E], bcx[:, E:2 * E], bcx[:, 2 * E:]
        bx = np.concatenate([np.zeros((K - 1, E)), B * X], 0)
        w = T[p + 'shortconv.conv.weight']          # [E][K]
        conv = np.stack([(bx[t:t + K] * w.T).sum(0) for t in range(n)])
        o = (C * conv) @ T[p + 'shortconv.out_proj.weight'].T
    else:
        hkv = KV[l]
        q = rms((h @ T[p + 'attn_q.weight'].T).reshape(n, H, hd), T[p + 'attn_q_norm.weight'])
        k = rms((h @ T[p + 'attn_k.weight'].T).reshape(n, hkv, hd), T[p + 'attn_k_norm.weight'])
        v = (h @ T[p + 'attn_v.weight'].T).reshape(n, hkv, hd)
        q, k = rope(q), rope(k)
        k = np.repeat(k, H // hkv, 1); v = np.repeat(v, H // hkv, 1)
        sc = np.einsum('thd,shd->hts', q, k) / math.sqrt(hd) + np.triu(np.full((n, n), -np.inf), 1)
        sc = np.exp(sc - sc.max(-1, keepdims=True)); sc /= sc.sum(-1, keepdims=True)
        o = np.einsum('hts,shd->thd', sc, v).reshape(n, H * hd) @ T[p + 'attn_output.weight'].T
    x = x + o
    g = rms(x, T[p + 'ffn_norm.weight'])
    if p + 'ffn_gate_inp.weight' in T:
        pr = 1 / (1 + np.exp(-(g @ T[p + 'ffn_gate_inp.weight'].T)))
        G, U, D, bias = T[p + 'ffn_gate_exps.weight'], T[p + 'ffn_up_exps.weight'], T[p + 'ffn_down_exps.weight'], T[p + 'exp_probs_b.bias']
        NU = int(kv('expert_used_count')); y = np.zeros_like(g)
        for t in range(n):
            sel = np.argsort(-(pr[t] + bias), kind='stable')[:NU]
            wsum = pr[t][sel].sum()
            for e in sel:
                y[t] += pr[t, e] / wsum * ((silu(G[e] @ g[t]) * (U[e] @ g[t])) @ D[e].T)
        x = x + y
    else:
        x = x + (silu(g @ T[p + 'ffn_gate.weight'].T) * (g @ T[p + 'ffn_up.weight'].T)) @ T[p + 'ffn_down.weight'].T
out = rms(x, T['token_embd_norm.weight']) @ T['token_embd.weight'].T
open(sys.argv[3], 'wb').write(out.astype(np.float32).tobytes())
