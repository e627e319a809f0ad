"""What a Guardian's sessions cost in memory: measured on the objects, and on the process.

The memory bound has two parts (docs/reliability.md, "Bounds"). Each session is counted at an
estimate of what dropping it frees (``SessionState.estimated_bytes``: so many bytes a
component, a remembered id, a session); :func:`held_bytes` measures the same thing on the
objects themselves, and the tests hold the estimate to it. And the process's real resident
size (:func:`resident_bytes`) is checked as sessions grow: past ``max_memory_bytes`` the least
recently used sessions are dropped, whatever the estimate said.

:func:`held_bytes` walks the objects an inventory, its graph and its findings reach and adds
up their ``sys.getsizeof``. Objects shared by every session (types, modules, functions, enum
members, ``None`` and the booleans) are not the session's to free and are not counted. A
string two inventories share (a member name from orjson's key cache, say) is counted in each:
the measure errs on the side of dropping a session too early, never too late. The walk costs
about what building the objects did, so it is for tests and benchmarks, not the decision path.
"""

from __future__ import annotations

import ctypes
import enum
import gc
import os
import sys
import types
from typing import Any

__all__ = ["held_bytes", "resident_bytes", "return_freed_memory"]

MAX_OBJECTS = 5_000_000
"""Objects one walk visits at most (a 100,000-component inventory is about 2.5 million);
past it the walk stops and what it counted so far is scaled up by the share not walked."""

# Shared by every session: classes, modules, functions, enum members (severities, types).
_SKIPPED_TYPES = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    enum.Enum,
)
_ATOMS = (str, bytes, int, float)


def held_bytes(*roots: Any) -> int:
    """Bytes held by ``roots`` and everything they reach (``sys.getsizeof``, each object once).

    Strings, bytes and numbers reach nothing and are sized without asking the collector for
    their referents. ``None``, booleans and small integers are the interpreter's."""
    seen: set[int] = set()
    total = 0
    todo = [root for root in roots if root is not None]
    get_referents = gc.get_referents
    getsizeof = sys.getsizeof
    visited = 0
    while todo and visited < MAX_OBJECTS:
        batch = todo
        todo = []
        for obj in batch:
            ident = id(obj)
            if ident in seen or obj is None or obj is True or obj is False:
                continue
            if isinstance(obj, _SKIPPED_TYPES):
                continue
            seen.add(ident)
            visited += 1
            if isinstance(obj, _ATOMS):
                total += getsizeof(obj)
                continue
            total += getsizeof(obj)
            todo.extend(get_referents(obj))
    if todo and visited:
        total += total * len(todo) // visited  # stopped early: the rest costs about as much
    return total


def resident_bytes() -> int | None:
    """This process's resident set size, from ``/proc/self/statm`` (Linux); ``None``
    where the system does not say (the memory bound then rests on the estimates alone)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return None


def return_freed_memory() -> None:
    """Hand memory freed by dropped sessions back to the system where the C library allows
    (glibc's ``malloc_trim``): without it, the freed heap stays resident until reused."""
    global _trim
    if _trim is None:
        try:
            _trim = ctypes.CDLL(None).malloc_trim
            _trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _trim = False
    if _trim:
        _trim(0)


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_trim: Any = None
