import re
import sys
from pathlib import Path

PATTERNS = {
    "aws": re.compile(r"AKIA[0-9A-Z]{16}"),
    "github": re.compile(r"ghp_[A-Za-z0-9]{36}"),
    "private key": re.compile(r"-----BEGIN (?:RSA |EC )?PRIVATE KEY-----"),
    "download piped to shell": re.compile(r"curl[^|\n]*\|\s*(?:ba)?sh"),
    "credential file": re.compile(r"\.aws/credentials|\.ssh/id_rsa"),
}

for path in Path(sys.argv[1]).rglob("*"):
    if path.is_file() and path.stat().st_size < 1_000_000:
        for n, line in enumerate(path.read_text(errors="ignore").splitlines(), 1):
            for name, rx in PATTERNS.items():
                if rx.search(line):
                    print(f"{path}:{n}: {name}")
