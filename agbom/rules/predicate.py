"""The base every compiled predicate shares, and the text matcher most of them use.

:mod:`agbom.rules.matchers` (names, versions, purls, endpoints, fields) and
:mod:`agbom.rules.signal_matchers` (what scan attaches) both build on these, so they live
below both: the signal predicates are loaded on use by ``compile_match`` without importing
the module that loads them.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence

from agbom.rules.subjects import Subject, is_glob


class Predicate:
    """A compiled test on a :class:`Subject` that can describe itself."""

    key = ""

    def __call__(self, subject: Subject) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def explain(self, subject: Subject) -> list[tuple[bool, str]]:
        """``(holds, description)`` for this predicate and, for combinators, their parts."""
        return [(self(subject), self.describe())]

    def negated(self) -> str:
        """What ``not`` of this predicate says, in words a reviewer reads."""
        return f"not ({self.describe()})"


class TextMatcher:
    """Exact values (case-insensitive) and globs, compiled into a set and one regex."""

    __slots__ = ("exact", "regex", "values")

    def __init__(self, values: Sequence[str]) -> None:
        self.values = tuple(values)
        self.exact = frozenset(v.casefold() for v in values if not is_glob(v))
        globs = [fnmatch.translate(v.casefold()) for v in values if is_glob(v)]
        self.regex = re.compile("|".join(f"(?:{g})" for g in globs)) if globs else None

    def __call__(self, value: str | None) -> bool:
        if value is None:
            return False
        folded = value.casefold()
        if folded in self.exact:
            return True
        return self.regex is not None and self.regex.fullmatch(folded) is not None

    def __str__(self) -> str:
        return " or ".join(repr(v) for v in self.values)
