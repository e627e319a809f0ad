"""The protocol layer's base error.

Everything under :mod:`agbom.protocol` raises a subclass of :class:`ProtocolError`, so a caller
(the guardian, a transport, the CLI) can handle the whole layer with one ``except``.
"""

from __future__ import annotations

from agbom.errors import AgbomError


class ProtocolError(AgbomError):
    """An ACS wire value could not be canonicalized, verified, or accepted."""
