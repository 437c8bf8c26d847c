# The reference rows of test_arch_variants' gemma3n case (tests/arch_variants_ref.h),
# since ik_llama.cpp has no gemma3n: an f64 numpy reading of llama.cpp's graph
# (src/models/gemma3n-iswa.cpp, gemma3n.cpp's hyper-parameters).  The embedding times
# sqrt(n_embd); per-layer inputs; 4 streams (stream 0 the embedding, the others its
# altup projections scaled to its magnitude); per layer: predict every stream from all
# of them (coefficients from tanh of the router on the active stream), laurel and
# attention (Q/K normed, V RMS-normed, scale 1, NEOX rope; sliding layers at base
# 10000 with a window, one global layer in 5; layers past the 20th reading the KV of
# the last layer of their kind before it) on the active prediction, the FFN (the first
# 10 layers' gates cut at mean + 1.6448533535 std), correct every stream by the
# innovation, the per-layer input into streams 1..; merge the streams; output norm;
# tied LM head; soft-cap 30.  Q, K and V rounded to f16, as the reference's cache and its dot
# with it keep them.
# usage: GGUF_PY=DIR python3 gemma3n_ref.py MODEL.gguf IDS OUT.f32  (DIR: gguf-py of a llama.cpp tree)
import sys, math
import os
sys.path.insert(0, os.environ.get('GGUF_PY', '/work/ref/ik_llama.cpp/gguf-py'))
import numpy as np
from gguf import GGUFReader
r = GGUFReader(sys.argv[1])
T = {t.name: np.array(t.data, dtype=np.float64) for t in r.tensors}
def kv(k, d=None):
    f = r.fields.get('gemma3n.' + k)
    return d if f is None else f.parts[f.data[0]][0]
E = int(kv('embedding_length')); H = int(kv('attention.head_count')); HKV = int(kv('attention.head_count_kv'))
L = int(kv('block_count')); eps = float(kv('attention.layer_norm_rms_epsilon')); base = float(kv('rope.freq_base'))
hd = int(kv('attention.key_length', E // H)); win = int(kv('attention.sliding_window'))
base_swa = float(kv('rope.freq_base_swa', 10000.0)); cap = float(kv('final_logit_softcapping', 30.0))
NP = int(kv('embedding_length_per_layer_input')); A = int(kv('altup.num_inputs', 4)); act = int(kv('altup.active_idx', 0))
PERIOD = 5; KV_FROM = 20; SPARSE = 10; STDMUL = 1.6448533535003662
ids = [int(x) for x in open(sys.argv[2]).read().split()]
n = len(ids); pos = np.arange(n, dtype=np.float64)
def rms(x, w=None):
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return y if w is None else y * w
def mag(x): return np.sqrt((x * x).sum(-1, keepdims=True))
def gelu(x): return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
def rope(x, b):  # NEOX: pairs (i, i + hd/2); x [n, heads, hd]
    i = np.arange(hd // 2); th = pos[:, None] * b ** (-2 * i / hd)
    c, s = np.cos(th)[:, None, :], np.sin(th)[:, None, :]
    a, bb = x[..., :hd // 2], x[..., hd // 2:]
    return np.concatenate([a * c - bb * s, a * s + bb * c], -1)
def swa(l): return l % PERIOD < PERIOD - 1
x0 = T['token_embd.weight'][ids] * math.sqrt(E)
# per-layer inputs [n, L, NP]
pl = (x0 @ T['per_layer_model_proj.weight'].T / math.sqrt(E)).reshape(n, L, NP)
pl = rms(pl, T['per_layer_proj_norm.weight'])
pl = (pl + T['per_layer_token_embd.weight'][ids].reshape(n, L, NP) * math.sqrt(NP)) / math.sqrt(2)
# the streams [A, n, E]
S = [x0]
for a in range(1, A):
    y = x0 @ T['altup_proj.weight'][a - 1].T
    S.append(y * mag(x0) / mag(y))
S = np.stack(S)
kvc = {}
def router(l, x): return np.tanh((rms(x, T[f'blk.{l}.altup_router_norm.weight']) / E) @ T[f'blk.{l}.altup_router.weight'].T)
for l in range(L):
    p = f'blk.{l}.'
    mod = router(l, S[act])
    c = (mod @ T[p + 'altup_predict_coef.weight'].T).reshape(n, A, A)   # c[t, j, k]
    P = np.einsum('tjk,ktd->jtd', c, S) + S
    active = P[act]
    cur = rms(active, T[p + 'attn_norm.weight'])
    lo = rms(cur @ T[p + 'laurel_l.weight'].T @ T[p + 'laurel_r.weight'].T, T[p + 'laurel_post_norm.weight']) + cur
    sl = swa(l); b = base_swa if sl else base
    q = rope(rms((cur @ T[p + 'attn_q.weight'].T).reshape(n, H, hd), T[p + 'attn_q_norm.weight']), b)
    if l < KV_FROM:
        k = rope(rms((cur @ T[p + 'attn_k.weight'].T).reshape(n, HKV, hd), T[p + 'attn_k_norm.weight']), b)
        v = rms((cur @ T[p + 'attn_v.weight'].T).reshape(n, HKV, hd))
        kvc[l] = (k.astype(np.float16).astype(np.float64), v.astype(np.float16).astype(np.float64))   # the F16 KV cache
    src = l if l < KV_FROM else max(j for j in range(KV_FROM) if swa(j) == sl)   # else the last of its kind with KV
    k, v = kvc[src]
    q = q.astype(np.float16).astype(np.float64)   # as the reference's f16 dot with the cache
    k = np.repeat(k, H // HKV, 1); v = np.repeat(v, H // HKV, 1)
    sc = np.einsum('thd,shd->hts', q, k)
    m = np.triu(np.full((n, n), -np.inf), 1)
    if sl:
        for t in range(n):
            for s_ in range(n):
                if t - s_ >= win: m[t, s_] = -np.inf
    sc = sc + m
    sc = np.exp(sc - sc.max(-1, keepdims=True)); sc /= sc.sum(-1, keepdims=True)
    o = np.einsum('hts,shd->thd', sc, v).reshape(n, H * hd) @ T[p + 'attn_output.weight'].T
    x = rms(o, T[p + 'post_attention_norm.weight']) + active
    x = (x + lo) / math.sqrt(2)
    h = rms(x, T[p + 'ffn_norm.weight'])
    g = h @ T[p + 'ffn_gate.weight'].T
    if l < SPARSE:
        mu = g.mean(-1, keepdims=True); sd = np.sqrt(((g - mu) ** 2).sum(-1, keepdims=True) / (g.shape[-1] - 1))
        g = np.maximum(g - (mu + sd * STDMUL), 0)
    f = (gelu(g) * (h @ T[p + 'ffn_up.weight'].T)) @ T[p + 'ffn_down.weight'].T
    x = rms(f, T[p + 'post_ffw_norm.weight']) + x
    mod = router(l, x)
    cc = mod @ T[p + 'altup_correct_coef.weight'].T + 1   # [n, A]
    inn = x - P[act]
    S = np.stack([inn * cc[:, j:j + 1] + P[j] for j in range(A)])
    fp = S[act] * T[p + 'altup_correct_scale.weight']
    fp = gelu(fp @ T[p + 'inp_gate.weight'].T) * pl[:, l, :]
    fp = rms(fp @ T[p + 'proj.weight'].T, T[p + 'post_norm.weight'])
    for a in range(1, A): S[a] = S[a] + fp
tm = mag(S[act]); out = S[0].copy()
for a in range(1, A):
    u = S[a] @ T['altup_unembd_proj.weight'][a - 1].T
    out = out + u * tm / mag(u)
out = out / A
logits = rms(out, T['output_norm.weight']) @ T['token_embd.weight'].T
logits = cap * np.tanh(logits / cap)
open(sys.argv[3], 'wb').write(logits.astype(np.float32).tobytes())
