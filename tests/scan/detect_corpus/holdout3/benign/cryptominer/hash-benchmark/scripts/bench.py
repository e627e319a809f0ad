#!/usr/bin/env python3
import argparse
import hashlib
import os
import time

ap = argparse.ArgumentParser()
ap.add_argument("--mb", type=int, default=256)
args = ap.parse_args()
data = os.urandom(1024 * 1024)
algos = {"sha256": hashlib.sha256, "sha512": hashlib.sha512,
         "blake2b": hashlib.blake2b, "md5": hashlib.md5}
try:
    import xxhash
    algos["xxh64"] = xxhash.xxh64
except ImportError:
    pass

for name, ctor in algos.items():
    h = ctor()
    t0 = time.perf_counter()
    for _ in range(args.mb):
        h.update(data)
    dt = time.perf_counter() - t0
    print(f"{name:<8} {args.mb / dt:8.1f} MB/s")
