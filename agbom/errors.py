"""The root of every error agbom raises on purpose.

Each layer subclasses :class:`AgbomError`; foreign exceptions (sqlite3, jsonschema, OSError)
are translated at the layer boundary so that callers, and the CLI in particular, only ever
have to handle this one family.
"""

from __future__ import annotations


class AgbomError(Exception):
    """Base class for errors agbom reports to its user."""

    def diagnostics(self) -> str:
        """One line for the user: what went wrong and, where known, what to do next."""
        return str(self)


class InputError(AgbomError):
    """A file or value the user supplied cannot be used (unreadable, too large, malformed)."""
