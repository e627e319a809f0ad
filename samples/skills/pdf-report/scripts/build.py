"""Concatenate Markdown files into a simple text PDF placeholder (sample skill script)."""

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    out, *sources = argv
    text = "\n\n".join(Path(s).read_text(encoding="utf-8") for s in sources)
    Path(out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
