# The reference rows of test_arch_variants' granitehybrid cases (tests/arch_variants_ref.h),
# since ik_llama.cpp has no Mamba-2: an f64 numpy reading of llama.cpp's granite-hybrid
# graph (src/models/granite-hybrid.cpp, build_mamba2_layer in graph-context-mamba.cpp,
# ggml's ssm_conv and ssm_scan).  Embeddings times embedding_scale.  Each layer: RMSNorm
# (attn_norm), then Mamba-2 (layers whose head_count_kv is 0) or attention (no rope when
# rope.scaling.finetuned is false, scores times attention.scale); the branch times
# residual_scale, added; the FFN under ffn_norm (dense SwiGLU, or softmax top-k experts
# renormalised plus a shared expert), times residual_scale, added; the output norm, the
# tied head, divided by logit_scale.
# Mamba-2: [z | xBC | dt] = ssm_in h; xBC = silu(causal depthwise conv of width d_conv over
# xBC's rows + conv bias); x (heads of head_dim), B and C (n_group groups of d_state; head h
# reads group h / (n_head / n_group)); per head, token by token: dt' = softplus(dt + dt_bias),
# S = S exp(dt' A) + x dt' B^T, y = S C + D x; y = silu(z) y, RMS-normed per group times
# ssm_norm; ssm_out y.
# nemotron_h (NVIDIA Nemotron-H, src/models/nemotron-h.cpp): each layer one block on its
# RMSNorm (attn_norm), added to the stream: Mamba-2 as above where head_count_kv and
# feed_forward_length are 0, attention without rope where feed_forward_length is 0, else an
# ungated FFN, ffn_down(relu(ffn_up h)^2); no multipliers; an untied output.
# nemotron_h_moe: the FFN layers' experts ungated too, p = sigmoid(router h), the
# expert_used_count best of p + exp_probs_b weighed by p (renormalised when
# expert_weights_norm, times expert_weights_scale), plus an ungated shared expert.
# falcon-h1 (TII Falcon-H1, src/models/falcon-h1.cpp): in every layer Mamba-2 and attention
# (NEOX rope) on the same RMSNorm (attn_norm), x += attn + ssm (ssm_norm where the layer
# has one), then the SwiGLU FFN under ffn_norm.
# usage: GGUF_PY=DIR python3 granitehybrid_ref.py MODEL.gguf IDS OUT.f32  (DIR: gguf-py of a llama.cpp tree)
import sys, math, os
sys.path.insert(0, os.environ.get('GGUF_PY', '/work/ref/ik_llama.cpp/gguf-py'))
import numpy as np
from gguf import GGUFReader
r = GGUFReader(sys.argv[1])
T = {t.name: np.array(t.data, dtype=np.float64) for t in r.tensors}
A = bytes(r.fields['general.architecture'].parts[-1]).decode()
def kv(k, d=None):
    f = r.fields.get(A + '.' + k)
    return d if f is None else f.parts[f.data[0]][0]
f = r.fields[A + '.attention.head_count_kv']
KV = [int(f.parts[i][0]) for i in f.data]
f = r.fields[A + '.feed_forward_length']
FF = [int(f.parts[i][0]) for i in f.data]
PAR = A == 'falcon-h1'
L_ = int(r.fields[A + '.block_count'].parts[-1][0])
if len(KV) == 1: KV = KV * L_   # one count for every layer
if len(FF) == 1: FF = FF * L_
ONE = A.startswith('nemotron_h')
E = int(kv('embedding_length')); H = int(kv('attention.head_count')); L = int(kv('block_count'))
eps = float(kv('attention.layer_norm_rms_epsilon'))
hd = int(kv('attention.key_length', E // H))
DC = int(kv('ssm.conv_kernel')); DI = int(kv('ssm.inner_size')); N = int(kv('ssm.state_size'))
SH = int(kv('ssm.time_step_rank')); G = int(kv('ssm.group_count')); P = DI // SH
emb_s = float(kv('embedding_scale', 0)); res_s = float(kv('residual_scale', 0))
att_s = float(kv('attention.scale', 0)); log_s = float(kv('logit_scale', 0))
rope_on = bool(kv('rope.scaling.finetuned', True)) and not ONE; base = float(kv('rope.freq_base', 10000.0))
ids = [int(x) for x in open(sys.argv[2]).read().split()]
n = len(ids); pos = np.arange(n, dtype=np.float64)
def rms(x, w): return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w
def silu(x): return x / (1 + np.exp(-x))
def rope(x):  # the llama pairing (2i, 2i + 1), or NEOX's (i, i + hd/2) for falcon-h1; x [n, heads, hd]
    i = np.arange(hd // 2); th = pos[:, None] * base ** (-2 * i / hd)
    c, s = np.cos(th)[:, None, :], np.sin(th)[:, None, :]
    if PAR:
        a, b = x[..., :hd // 2], x[..., hd // 2:]
        return np.concatenate([a * c - b * s, a * s + b * c], -1)
    a, b = x[..., 0::2], x[..., 1::2]
    o = np.empty_like(x); o[..., 0::2] = a * c - b * s; o[..., 1::2] = a * s + b * c
    return o
def swiglu(g, G_, U_, D_): return (silu(g @ G_.T) * (g @ U_.T)) @ D_.T
def mamba(p, h):
    zxbcdt = h @ T[p + 'ssm_in.weight'].T
    z, xbc, dt = zxbcdt[:, :DI], zxbcdt[:, DI:2 * DI + 2 * G * N], zxbcdt[:, 2 * DI + 2 * G * N:]
    CD = DI + 2 * G * N
    w = T[p + 'ssm_conv1d.weight'].reshape(CD, DC)
    pad = np.concatenate([np.zeros((DC - 1, CD)), xbc], 0)
    conv = np.stack([(pad[t:t + DC] * w.T).sum(0) for t in range(n)])
    if p + 'ssm_conv1d.bias' in T: conv = conv + T[p + 'ssm_conv1d.bias']
    conv = silu(conv)
    X, B, C = conv[:, :DI].reshape(n, SH, P), conv[:, DI:DI + G * N].reshape(n, G, N), conv[:, DI + G * N:].reshape(n, G, N)
    dtb = T[p + 'ssm_dt.bias']; Aa = T[p + 'ssm_a'].reshape(SH); Dd = T[p + 'ssm_d'].reshape(SH)
    S = np.zeros((SH, P, N)); y = np.zeros((n, SH, P))
    for t in range(n):
        for hh in range(SH):
            g = hh // (SH // G)
            v = dt[t, hh] + dtb[hh]
            sp = v if v > 20 else math.log1p(math.exp(v))
            S[hh] = S[hh] * math.exp(sp * Aa[hh]) + np.outer(X[t, hh] * sp, B[t, g])
            y[t, hh] = S[hh] @ C[t, g] + X[t, hh] * Dd[hh]
    y = y.reshape(n, DI) * silu(z)
    if p + 'ssm_norm.weight' in T:
        nw = T[p + 'ssm_norm.weight'].reshape(G, DI // G)
        y = rms(y.reshape(n, G, DI // G), nw).reshape(n, DI)
    o = y @ T[p + 'ssm_out.weight'].T
    return o

def attention(p, h, hkv):
    q = (h @ T[p + 'attn_q.weight'].T).reshape(n, H, hd)
    k = (h @ T[p + 'attn_k.weight'].T).reshape(n, hkv, hd)
    v = (h @ T[p + 'attn_v.weight'].T).reshape(n, hkv, hd)
    if rope_on: q, k = rope(q), rope(k)
    k = np.repeat(k, H // hkv, 1); v = np.repeat(v, H // hkv, 1)
    sc = np.einsum('thd,shd->hts', q, k) * (att_s if att_s else 1 / math.sqrt(hd)) + np.triu(np.full((n, n), -np.inf), 1)
    sc = np.exp(sc - sc.max(-1, keepdims=True)); sc /= sc.sum(-1, keepdims=True)
    o = np.einsum('hts,shd->thd', sc, v).reshape(n, H * hd) @ T[p + 'attn_output.weight'].T
    return o

x = T['token_embd.weight'][ids]
if emb_s: x = x * emb_s
for l in range(L):
    p = f'blk.{l}.'
    h = rms(x, T[p + 'attn_norm.weight'])
    if ONE and FF[l] > 0 and p + 'ffn_gate_inp.weight' in T:   # ungated experts and a shared one
        pr = 1 / (1 + np.exp(-(h @ T[p + 'ffn_gate_inp.weight'].T)))
        Ux, Dx, bias = T[p + 'ffn_up_exps.weight'], T[p + 'ffn_down_exps.weight'], T[p + 'exp_probs_b.bias']
        NU = int(kv('expert_used_count')); y = np.zeros_like(h)
        nrm = bool(kv('expert_weights_norm', False)); scl = float(kv('expert_weights_scale', 1.0))
        for t in range(n):
            sel = np.argsort(-(pr[t] + bias), kind='stable')[:NU]
            wsum = pr[t][sel].sum() if nrm else 1.0
            for e in sel:
                y[t] += pr[t, e] / wsum * scl * (np.maximum(Ux[e] @ h[t], 0) ** 2 @ Dx[e].T)
        y = y + np.maximum(h @ T[p + 'ffn_up_shexp.weight'].T, 0) ** 2 @ T[p + 'ffn_down_shexp.weight'].T
        x = x + y
        continue
    if ONE and FF[l] > 0:   # an FFN alone
        x = x + np.maximum(h @ T[p + 'ffn_up.weight'].T, 0) ** 2 @ T[p + 'ffn_down.weight'].T
        continue
    if PAR:
        o = attention(p, h, KV[l]) + mamba(p, h)
    elif KV[l] == 0:
        o = mamba(p, h)
    else:
        o = attention(p, h, KV[l])
    if res_s: o = o * res_s
    x = x + o
    if ONE: continue
    g = rms(x, T[p + 'ffn_norm.weight'] if p + 'ffn_norm.weight' in T else T[p + 'ffn_norm'])
    if p + 'ffn_gate_inp.weight' in T:
        lg = g @ T[p + 'ffn_gate_inp.weight'].T
        pr = np.exp(lg - lg.max(-1, keepdims=True)); pr /= pr.sum(-1, keepdims=True)
        Gx, Ux, Dx = T[p + 'ffn_gate_exps.weight'], T[p + 'ffn_up_exps.weight'], T[p + 'ffn_down_exps.weight']
        NU = int(kv('expert_used_count')); y = np.zeros_like(g)
        for t in range(n):
            sel = np.argsort(-pr[t], kind='stable')[:NU]
            wsum = pr[t][sel].sum()
            for e in sel:
                y[t] += pr[t, e] / wsum * ((silu(Gx[e] @ g[t]) * (Ux[e] @ g[t])) @ Dx[e].T)
        if p + 'ffn_gate_shexp.weight' in T:
            y = y + swiglu(g, T[p + 'ffn_gate_shexp.weight'], T[p + 'ffn_up_shexp.weight'], T[p + 'ffn_down_shexp.weight'])
    else:
        y = swiglu(g, T[p + 'ffn_gate.weight'], T[p + 'ffn_up.weight'], T[p + 'ffn_down.weight'])
    if res_s: y = y * res_s
    x = x + y
out = rms(x, T['output_norm.weight']) @ T['output.weight' if 'output.weight' in T else 'token_embd.weight'].T
if log_s: out = out / log_s
open(sys.argv[3], 'wb').write(out.astype(np.float32).tobytes())
