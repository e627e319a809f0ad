#!/usr/bin/env python3
import sys
import unicodedata

SUSPECT = {0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF,          # zero-width
           0x202A, 0x202B, 0x202C, 0x202D, 0x202E,          # bidi embeddings/overrides
           0x2066, 0x2067, 0x2068, 0x2069}                  # bidi isolates
found = 0
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as fh:
            for ln, line in enumerate(fh, 1):
                for col, ch in enumerate(line, 1):
                    if ord(ch) in SUSPECT:
                        found += 1
                        name = unicodedata.name(ch, "UNKNOWN")
                        print(f"{path}:{ln}:{col} U+{ord(ch):04X} {name}")
    except (UnicodeDecodeError, OSError):
        continue
print(f"{found} suspicious character(s)")
sys.exit(1 if found else 0)
