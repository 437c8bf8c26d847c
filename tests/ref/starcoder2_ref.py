# The reference rows of test_arch_variants' starcoder2 case (tests/arch_variants_ref.h):
# an f64 numpy reading of llama.cpp's starcoder2 graph (src/models/starcoder2.cpp), as
# ik_llama.cpp's own graph for it differs.  LayerNorm (mean and variance, eps
# layer_norm_epsilon, weight and bias) before attention and the FFN; Q/K/V with biases,
# NEOX rope, 1/sqrt(hd); the output with its bias; x += attn; x += down(gelu(up x + b) ) + b
# (GELU's tanh form); the output LayerNorm and the LM head (tied when absent).
# usage: GGUF_PY=DIR python3 starcoder2_ref.py MODEL.gguf IDS OUT.f32
import sys, math, os
sys.path.insert(0, os.environ.get('GGUF_PY', '/work/ref/ik_llama.cpp/gguf-py'))
import numpy as np
from gguf import GGUFReader
r = GGUFReader(sys.argv[1])
T = {t.name: np.array(t.data, dtype=np.float64) for t in r.tensors}
def kv(k, d=None):
    f = r.fields.get('starcoder2.' + k)
    return d if f is None else f.parts[f.data[0]][0]
E = int(kv('embedding_length')); H = int(kv('attention.head_count')); HKV = int(kv('attention.head_count_kv'))
L = int(kv('block_count')); eps = float(kv('attention.layer_norm_epsilon')); base = float(kv('rope.freq_base', 10000.0))
hd = E // H
ids = [int(x) for x in open(sys.argv[2]).read().split()]
n = len(ids); pos = np.arange(n, dtype=np.float64)
def ln(x, w, b):
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b
def rope(x):
    i = np.arange(hd // 2); th = pos[:, None] * base ** (-2 * i / hd)
    c, s = np.cos(th)[:, None, :], np.sin(th)[:, None, :]
    a, b = x[..., :hd // 2], x[..., hd // 2:]
    return np.concatenate([a * c - b * s, a * s + b * c], -1)
def gelu(x): return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
x = T['token_embd.weight'][ids]
for l in range(L):
    p = f'blk.{l}.'
    h = ln(x, T[p + 'attn_norm.weight'], T[p + 'attn_norm.bias'])
    q = (h @ T[p + 'attn_q.weight'].T + T[p + 'attn_q.bias']).reshape(n, H, hd)
    k = (h @ T[p + 'attn_k.weight'].T + T[p + 'attn_k.bias']).reshape(n, HKV, hd)
    v = (h @ T[p + 'attn_v.weight'].T + T[p + 'attn_v.bias']).reshape(n, HKV, hd)
    q, k = rope(q), rope(k)
    k = np.repeat(k, H // HKV, 1); v = np.repeat(v, H // HKV, 1)
    sc = np.einsum('thd,shd->hts', q, k) / math.sqrt(hd) + np.triu(np.full((n, n), -np.inf), 1)
    sc = np.exp(sc - sc.max(-1, keepdims=True)); sc /= sc.sum(-1, keepdims=True)
    x = x + np.einsum('hts,shd->thd', sc, v).reshape(n, H * hd) @ T[p + 'attn_output.weight'].T + T[p + 'attn_output.bias']
    g = ln(x, T[p + 'ffn_norm.weight'], T[p + 'ffn_norm.bias'])
    x = x + gelu(g @ T[p + 'ffn_up.weight'].T + T[p + 'ffn_up.bias']) @ T[p + 'ffn_down.weight'].T + T[p + 'ffn_down.bias']
out = ln(x, T['output_norm.weight'], T['output_norm.bias']) @ T.get('output.weight', T['token_embd.weight']).T
open(sys.argv[3], 'wb').write(out.astype(np.float32).tobytes())
