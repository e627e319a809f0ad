"""The AgBOM hash kept up to date piece by piece, so a change costs less than the AgBOM.

The AgBOM hash is SHA-256 over the RFC 8785 bytes of the whole document. SHA-256 reads its
input front to back and cannot be patched in the middle, but it can be resumed: a copy of the
hash state after a prefix hashes any continuation of that prefix. So the document is held
as chunks of consecutive components (in id order), each with its components' bytes already
joined, and the hash state before each chunk is remembered. A change rebuilds the chunks it
touches and hashes from the first of them to the end: on average half the document's bytes,
in a few hundred ``update`` calls, with no per-component list and no join of the whole.

A layout is immutable once built; a derived AgBOM shares every untouched chunk (and the
states before the first touched one) with the AgBOM it came from.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from typing import Any, Protocol


class Canonical(Protocol):
    """What a layout needs of a component: its RFC 8785 bytes (``model.Component`` has them).
    Typed by this protocol so that the layout does not import the model that holds it."""

    @property
    def canonical(self) -> bytes: ...


CHUNK_TARGET = 512
"""Components per chunk when a layout is built; a chunk grown past twice this is split."""


class _Chunk:
    """Consecutive components: their ids in order and their canonical bytes joined by
    commas (the document's separators inside the chunk)."""

    __slots__ = ("blob", "ids")

    def __init__(self, ids: list[str], blob: bytes | None) -> None:
        # blob None: the ids changed and the bytes are still to be joined.
        self.ids = ids
        self.blob = blob


def _chunk(ids: list[str], components: Mapping[str, Canonical]) -> _Chunk:
    return _Chunk(ids, b",".join([components[cid].canonical for cid in ids]))


class DocumentLayout:
    """The canonical document of one AgBOM as ``prefix``, chunks and ``suffix``, with the
    SHA-256 state before each chunk, and the resulting hash."""

    __slots__ = ("chunks", "digest", "prefix", "starts", "states", "suffix")

    def __init__(
        self,
        prefix: bytes,
        suffix: bytes,
        chunks: list[_Chunk],
        states: list[Any],
        digest: str,
    ) -> None:
        self.prefix = prefix
        self.suffix = suffix
        self.chunks = chunks
        # First id of each chunk: bisect finds the chunk a component belongs to.
        self.starts = [chunk.ids[0] for chunk in chunks]
        self.states = states
        self.digest = digest

    @classmethod
    def build(
        cls, prefix: bytes, suffix: bytes, components: Mapping[str, Canonical]
    ) -> DocumentLayout:
        """The layout of a document whose components (in document order) are ``components``."""
        ids = list(components)
        chunks = [
            _chunk(ids[at : at + CHUNK_TARGET], components)
            for at in range(0, len(ids), CHUNK_TARGET)
        ]
        return cls._hashed(prefix, suffix, chunks, [], 0)

    @classmethod
    def _hashed(
        cls,
        prefix: bytes,
        suffix: bytes,
        chunks: list[_Chunk],
        states: list[Any],
        start: int,
    ) -> DocumentLayout:
        """Hash ``chunks[start:]`` resuming from ``states[start]`` (from ``prefix`` when
        ``start`` is 0); ``states[:start]`` are kept as they are."""
        if start == 0:
            state = hashlib.sha256(prefix)
            states = []
        else:
            state = states[start].copy()
            states = states[:start]
        keep = states.append
        update = state.update
        for index in range(start, len(chunks)):
            keep(state.copy())
            if index:
                update(b",")
            blob = chunks[index].blob
            assert blob is not None  # every chunk is joined before it is hashed
            update(blob)
        update(suffix)
        return cls(prefix, suffix, chunks, states, "sha256:" + state.hexdigest())

    def derive(
        self,
        prefix: bytes,
        suffix: bytes,
        components: Mapping[str, Canonical],
        touched: Iterable[str],
    ) -> DocumentLayout:
        """The layout of the document whose components are ``components``, which differ
        from this layout's at most in the ids ``touched`` (added, removed or changed)."""
        chunks = list(self.chunks)
        starts = list(self.starts)
        first = len(chunks)
        # Chunks are patched from the last touched id to the first, so an index found by
        # bisect stays valid while later chunks split or vanish.
        for cid in sorted(set(touched), reverse=True):
            present = cid in components
            if not chunks:
                if present:
                    chunks.append(_Chunk([cid], None))
                    starts.append(cid)
                    first = 0
                continue
            index = max(bisect_right(starts, cid) - 1, 0)
            ids = chunks[index].ids
            at = bisect_left(ids, cid)
            held = at < len(ids) and ids[at] == cid
            if present and not held:
                ids = [*ids[:at], cid, *ids[at:]]
            elif held and not present:
                ids = [*ids[:at], *ids[at + 1 :]]
            # Joined below, once per chunk however many of its ids changed.
            chunks[index] = _Chunk(ids, None)
            first = min(first, index)
        if first == len(chunks) and prefix == self.prefix and suffix == self.suffix:
            return self
        rebuilt: list[_Chunk] = []
        for chunk in chunks[first:]:
            ids = chunk.ids
            if not ids:
                continue
            if chunk.blob is not None:
                rebuilt.append(chunk)
            elif len(ids) > 2 * CHUNK_TARGET:
                rebuilt.extend(
                    _chunk(ids[at : at + CHUNK_TARGET], components)
                    for at in range(0, len(ids), CHUNK_TARGET)
                )
            else:
                rebuilt.append(_chunk(ids, components))
        chunks[first:] = rebuilt
        if prefix != self.prefix:
            first = 0
        # Resume no later than the last chunk (a changed suffix alone rehashes only it) and
        # from a state this layout holds.
        first = max(min(first, len(chunks) - 1, len(self.states) - 1), 0)
        return DocumentLayout._hashed(prefix, suffix, chunks, self.states, first)
