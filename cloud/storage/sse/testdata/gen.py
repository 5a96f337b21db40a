#!/usr/bin/env python3
"""Writes vectors.json: streams of package sse's format, made here with the
Python cryptography package's AES-GCM, independently of the Go code."""
import hashlib, json, struct
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

def stream(key, prefix, plain):
    """One layer (a 32-byte key, "LSE1") or two (64 bytes: the inner key,
    then the outer; 16 bytes of prefix: the inner's, then the outer's; "LSE2")."""
    layers = [(AESGCM(key[i:i + 32]), prefix[j:j + 8]) for i, j in zip(range(0, len(key), 32), range(0, len(prefix), 8))]
    out = (b"LSE1" if len(layers) == 1 else b"LSE2") + prefix
    i = 0
    while True:
        chunk, plain = plain[:65536], plain[65536:]
        last = len(plain) == 0
        n = i | (1 << 31 if last else 0)
        for g, p in layers:
            chunk = g.encrypt(p + struct.pack(">I", n), chunk, None)
        out += chunk
        if last:
            return out
        i += 1

key = bytes(range(32))
prefix = bytes(range(1, 9))
vs = []
for name, plain in [("empty", b""), ("short", b"hello, lattice")]:
    vs.append({"name": name, "key": key.hex(), "prefix": prefix.hex(), "plaintext": plain.hex(),
               "stream": stream(key, prefix, plain).hex()})
pattern, size = "lattice storage ", 3 * 65536 + 5
plain = (pattern * (size // len(pattern) + 1)).encode()[:size]
vs.append({"name": "four chunks", "key": key.hex(), "prefix": prefix.hex(), "plain_pattern": pattern, "plain_size": size,
           "stream_sha256": hashlib.sha256(stream(key, prefix, plain)).hexdigest()})
dual_key, dual_prefix = bytes(range(64)), bytes(range(1, 17))
for name, plain in [("dual-layer, empty", b""), ("dual-layer, short", b"hello, lattice")]:
    vs.append({"name": name, "key": dual_key.hex(), "prefix": dual_prefix.hex(), "plaintext": plain.hex(),
               "stream": stream(dual_key, dual_prefix, plain).hex()})
plain = (pattern * (size // len(pattern) + 1)).encode()[:size]
vs.append({"name": "dual-layer, four chunks", "key": dual_key.hex(), "prefix": dual_prefix.hex(), "plain_pattern": pattern,
           "plain_size": size, "stream_sha256": hashlib.sha256(stream(dual_key, dual_prefix, plain)).hexdigest()})
with open("vectors.json", "w") as f:
    json.dump(vs, f, indent=1)
    f.write("\n")
