#!/usr/bin/env python3
"""Rewrites a GGUF file's metadata to make the inconsistent files of
tests/hostile.sh: hostile_gguf.py IN OUT CASE.  Tensor data is copied as is
(tensor offsets are relative to the data section, so only the header
changes).  Cases: more-tokens, fewer-tokens, vocab-size, eos-range,
pad-range, dup-token, dup-esc, dead-merge."""
import struct
import sys

SCALAR = {0: '<B', 1: '<b', 2: '<H', 3: '<h', 4: '<I', 5: '<i', 6: '<f', 7: '<?', 10: '<Q', 11: '<q', 12: '<d'}
T_STR, T_ARR = 8, 9


class Reader:
    def __init__(self, b):
        self.b, self.p = b, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.b, self.p)[0]
        self.p += struct.calcsize(fmt)
        return v

    def string(self):
        n = self.take('<Q')
        s = self.b[self.p:self.p + n]
        self.p += n
        return s

    def value(self, t):
        if t == T_STR:
            return self.string()
        if t == T_ARR:
            at, n = self.take('<I'), self.take('<Q')
            return (at, [self.value(at) for _ in range(n)])
        return self.take(SCALAR[t])


def put_value(out, t, v):
    if t == T_STR:
        out += struct.pack('<Q', len(v)) + v
    elif t == T_ARR:
        at, items = v
        out += struct.pack('<IQ', at, len(items))
        for x in items:
            put_value(out, at, x)
    else:
        out += struct.pack(SCALAR[t], v)


def main():
    src, dst, case = sys.argv[1:4]
    b = open(src, 'rb').read()
    r = Reader(b)
    assert r.take('<I') == 0x46554747, 'not GGUF'
    version, n_t, n_kv = r.take('<I'), r.take('<Q'), r.take('<Q')
    kv = []
    for _ in range(n_kv):
        k = r.string().decode()
        t = r.take('<I')
        kv.append([k, t, r.value(t)])
    infos_start = r.p
    for _ in range(n_t):
        r.string()
        nd = r.take('<I')
        r.p += 8 * nd + 4 + 8
    infos = b[infos_start:r.p]
    d = {k: i for i, (k, _, _) in enumerate(kv)}
    align = kv[d['general.alignment']][2] if 'general.alignment' in d else 32
    data = b[(r.p + align - 1) // align * align:]

    def arr(k):
        return kv[d[k]][2][1]

    toks = arr('tokenizer.ggml.tokens')
    if case == 'more-tokens':        # the tokenizer outgrows the embedding
        for k in ('tokenizer.ggml.tokens', 'tokenizer.ggml.token_type', 'tokenizer.ggml.scores'):
            if k in d:
                a = arr(k)
                a += [b'extra%d' % i if k.endswith('tokens') else a[0] for i in range(5)]
    elif case == 'fewer-tokens':     # an embedding padded past the vocabulary
        for k in ('tokenizer.ggml.tokens', 'tokenizer.ggml.token_type', 'tokenizer.ggml.scores'):
            if k in d:
                del arr(k)[-1]
        kv[d['tokenizer.ggml.eot_token_id']][2] = len(toks) - 1
    elif case == 'vocab-size':
        kv[d['llama.vocab_size']][2] = len(toks) + 7
    elif case == 'eos-range':
        kv[d['tokenizer.ggml.eos_token_id']][2] = len(toks) + 100
    elif case == 'pad-range':
        kv.append(['tokenizer.ggml.padding_token_id', 4, len(toks) + 3])
    elif case == 'dup-token':
        toks[40] = toks[39]
    elif case == 'dup-esc':          # a duplicate whose text would colour the terminal
        toks[39] = toks[40] = b'\x1b[31mRED\x1b]0;title\x07'
    elif case == 'dead-merge':
        arr('tokenizer.ggml.merges').append(b'\xc4\xb3zq \xc4\xb3xv')
    else:
        sys.exit('unknown case ' + case)

    out = bytearray(struct.pack('<IIQQ', 0x46554747, version, n_t, len(kv)))
    for k, t, v in kv:
        kb = k.encode()
        out += struct.pack('<Q', len(kb)) + kb + struct.pack('<I', t)
        put_value(out, t, v)
    out += infos
    out += b'\0' * (-len(out) % align)
    out += data
    open(dst, 'wb').write(out)


main()
