"""The export layer's error and the one-method interface every output format implements."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from agbom.errors import AgbomError

if TYPE_CHECKING:
    from agbom.inventory import AgBOM


class ExportError(AgbomError):
    """An AgBOM cannot be exported, or an exported document does not validate."""


@runtime_checkable
class Exporter(Protocol):
    """Turns a validated :class:`~agbom.inventory.AgBOM` into the bytes of one format.

    ``name`` is the registry name (``cyclonedx-json@1.6``); ``media_type`` is what an HTTP
    response or a file-type sniffer should call the bytes. ``export`` must be deterministic:
    the same AgBOM gives the same bytes.
    """

    @property
    def name(self) -> str: ...

    @property
    def media_type(self) -> str: ...

    def export(self, agbom: AgBOM) -> bytes: ...
