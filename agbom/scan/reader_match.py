"""Which reader reads a path: the most specific glob of a set of readers that matches the
path's trailing components. Shared by the scanner (every reader) and the content checks of a
skill's MCP configs (the client readers only), below both."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from fnmatch import translate

from agbom.scan.interface import Reader


class ReaderMatcher:
    """Map a path to the most specific reader whose glob matches its trailing components."""

    def __init__(self, readers: Iterable[Reader]) -> None:
        self.exact: dict[str, list[tuple[int, tuple[re.Pattern[str], ...], Reader]]] = {}
        self.wild: list[tuple[re.Pattern[str], int, tuple[re.Pattern[str], ...], Reader]] = []
        for order, reader in enumerate(readers):
            for glob in reader.globs:
                parts = glob.split("/")
                last = parts[-1]
                parents = tuple(re.compile(translate(p)) for p in parts[:-1])
                # Specificity: more components first, then exact names, then reader order.
                rank = -len(parts) * 1000 + order
                if any(c in last for c in "*?["):
                    self.wild.append((re.compile(translate(last)), rank + 500, parents, reader))
                else:
                    self.exact.setdefault(last, []).append((rank, parents, reader))

    def match(self, name: str, parents: Sequence[str]) -> Reader | None:
        best: tuple[int, Reader] | None = None
        candidates = list(self.exact.get(name, ()))
        candidates.extend((rank, pp, r) for rx, rank, pp, r in self.wild if rx.match(name))
        for rank, pattern_parents, reader in candidates:
            n = len(pattern_parents)
            if n > len(parents):
                continue
            if n and not all(
                p.match(part)
                for p, part in zip(pattern_parents, parents[len(parents) - n :], strict=True)
            ):
                continue
            if best is None or rank < best[0]:
                best = (rank, reader)
        return best[1] if best else None
