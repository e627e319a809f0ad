"""The host configuration layer's error: a config that cannot be read or written as asked."""

from __future__ import annotations

from agbom.errors import AgbomError


class HostConfigError(AgbomError):
    """A host's hook configuration cannot be read, changed or written (one line, no traceback)."""
