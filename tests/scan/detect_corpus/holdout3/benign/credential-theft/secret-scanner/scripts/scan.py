#!/usr/bin/env python3
import os
import re
import sys

RULES = {
    "aws-access-key": re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    "private-key": re.compile(r"-----BEGIN (RSA |EC |OPENSSH )?PRIVATE KEY-----"),
    "github-token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36}\b"),
    "stripe-key": re.compile(r"\bsk_(live|test)_[A-Za-z0-9]{16,}\b"),
    "slack-token": re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}\b"),
}
SKIP = {".git", "node_modules", ".venv", "dist"}


def mask(s):
    return s[:4] + "****" + s[-4:] if len(s) > 10 else "****"


root = sys.argv[1] if len(sys.argv) > 1 else "."
hits = 0
for dirpath, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if d not in SKIP]
    for f in files:
        p = os.path.join(dirpath, f)
        try:
            with open(p, encoding="utf-8", errors="ignore") as fh:
                for i, line in enumerate(fh, 1):
                    for rule, rx in RULES.items():
                        m = rx.search(line)
                        if m:
                            hits += 1
                            print(f"{p}:{i}  {rule}  {mask(m.group(0))}")
        except OSError:
            continue
print(f"{hits} finding(s)")
sys.exit(1 if hits else 0)
