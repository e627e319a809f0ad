"""Check agbom's reading of the ``skills`` installer's lock files against real projects.

Give it folders that hold a committed ``skills-lock.json`` beside the skills it installed
(``.agents/skills/NAME``, agent folders): for each, every lock entry is checked against each
installed copy, as ``agbom check --locked`` does, and the statuses are counted. A project
whose committed skills match their ``computedHash`` shows that agbom recomputes the hash the
installer wrote; ``mismatch`` lines name the entries it could not reproduce.

    python scripts/skills_lock_corpus.py CHECKOUT...

The figures published in docs/skills.md ("Skill lock files") came from public repositories
checked out at the commits listed there; none of their files is kept in this repository.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from agbom.scan.skills_lock import SkillsLockError, read_skills_lock, verify_lock


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    total: Counter[str] = Counter()
    for folder in argv:
        try:
            lock = read_skills_lock(Path(folder) / "skills-lock.json")
        except SkillsLockError as exc:
            print(f"{folder}: {exc}")
            continue
        counts = Counter(check.status for check in verify_lock(lock))
        total.update(counts)
        print(f"{folder}: {len(lock.entries)} entries: {dict(sorted(counts.items()))}")
        for check in verify_lock(lock):
            if check.status == "mismatch":
                print(f"  mismatch {check.name} at {check.folder}")
    print(f"total: {dict(sorted(total.items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
