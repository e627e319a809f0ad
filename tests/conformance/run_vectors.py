"""Print how agbom fares on the ACS-core members of ``agent-evidence-vectors``.

    python -m tests.conformance.run_vectors [--json OUT]

Starts real ``agbom serve`` processes on 127.0.0.1 in a temporary folder, drives every
applicable member over HTTP, and prints one row per member: id, family, the member's kind,
the classification, what the member expects and what agbom answered. Exits 1 when a member
that is run does not get its expected outcome.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path

from tests.conformance.acs_core_vectors import Outcome, run_corpus


def status(outcome: Outcome) -> str:
    if outcome.passed is None:
        return outcome.classification
    return "pass" if outcome.passed else "FAIL"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write every outcome, with traffic")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="acs-core-") as tmp:
        outcomes = run_corpus(Path(tmp))
    order = sorted(outcomes, key=lambda o: (int(o.family.rsplit("-", 1)[1]), o.member_id))
    rows = [("member", "family", "kind", "classification", "status", "expected", "got")]
    rows += [
        (o.member_id, o.family, o.kind, o.classification, status(o), o.expected, o.got)
        for o in order
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row[:6], widths, strict=True)), row[6])
    counts = collections.Counter(status(o) for o in outcomes)
    print()
    print(", ".join(f"{n} {k}" for k, n in sorted(counts.items())), f"({len(outcomes)} members)")
    for o in order:
        if o.passed is False or (o.passed is None and o.classification in ("wire",)):
            print(f"{o.member_id}: {o.note}")
    if args.json:
        args.json.write_text(
            json.dumps([o.__dict__ for o in order], indent=1, default=str), encoding="utf-8"
        )
    return 1 if counts.get("FAIL") else 0


if __name__ == "__main__":
    sys.exit(main())
