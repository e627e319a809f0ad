""":class:`AgbomDocument`: an AgBOM handed to the store as its document, without building it.

``save_agbom_version`` takes the document to store as a mapping. Building that mapping from an
:class:`~agbom.inventory.AgBOM` (``to_document``) copies every component, which at 10k
components costs more than the rest of an ``agbom/changed``. This wrapper is a read-only
mapping over the AgBOM's canonical document instead: ``{**header, "components": [...]}``, the
components in id order, each the AgBOM's own (shared, read-only) ``data``. Any backend can use
it as the plain mapping it is; the SQLite store also sees the components themselves, so it
stores only those that are not the very objects of the session's previous version.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agbom.inventory import AgBOM

__all__ = ["AgbomDocument"]


class AgbomDocument(Mapping[str, Any]):
    """The canonical document of ``agbom`` as a mapping (the same members, values and order
    as ``agbom.to_document()``), built on demand and sharing the AgBOM's values.

    Treat it, and everything reached through it, as read-only: the values are the AgBOM's.
    """

    __slots__ = ("agbom", "forms", "fresh", "prestored_in")

    def __init__(self, agbom: AgBOM) -> None:
        self.agbom = agbom
        # What a store computed of the components ahead of storing them (off the Guardian's
        # lock, see Store.prepare_document): their stored form by id, and the store whose
        # content-addressed table already holds every one of them. Opaque to everyone else.
        self.forms: dict[str, Any] | None = None
        self.fresh: tuple[str, dict[str, Any]] | None = None  # a first version's index rows
        self.prestored_in: str | None = None

    def __getitem__(self, key: str) -> Any:
        if key == "components":
            return [component.data for component in self.agbom]
        return self.agbom.header[key]

    def __iter__(self) -> Iterator[str]:
        for key in self.agbom.header:
            if key != "components":
                yield key
        yield "components"

    def __len__(self) -> int:
        header = self.agbom.header
        return len(header) + (0 if "components" in header else 1)

    def __repr__(self) -> str:
        return f"AgbomDocument({self.agbom!r})"
