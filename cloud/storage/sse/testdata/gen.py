#!/usr/bin/env python3
"""Writes vectors.json: streams of package sse's format, made here with the
Python cryptography package's AES-GCM, independently of the Go code."""
import hashlib, json, struct
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

def stream(key, prefix, plain):
    g = AESGCM(key)
    out = b"LSE1" + prefix
    i = 0
    while True:
        chunk, plain = plain[:65536], plain[65536:]
        last = len(plain) == 0
        n = i | (1 << 31 if last else 0)
        out += g.encrypt(prefix + struct.pack(">I", n), chunk, None)
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
with open("vectors.json", "w") as f:
    json.dump(vs, f, indent=1)
    f.write("\n")
