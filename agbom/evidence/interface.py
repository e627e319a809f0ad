"""The evidence layer's errors and algorithm names.

Evidence is what a third party can check without any secret agbom holds: asymmetric
signatures (ML-DSA-65, Ed25519) over chain heads, evidence bundles and BOMs. This layer sits
above ``protocol``/``inventory``/``store`` and below ``export``/``cli``.
"""

from __future__ import annotations

from agbom.errors import AgbomError, InputError

ML_DSA_65 = "ML-DSA-65"
"""FIPS 204 ML-DSA at security category 3, spelled as the ACS §10.1 registry spells it."""
ED25519 = "Ed25519"
"""RFC 8032 Ed25519. Not in the ACS v0.1 registry (which lists ECDSA-P256 as its classical
curve); offered because the registry is crypto-agile, CycloneDX's JSF list has it and
tooling that reads DSSE/in-toto supports it widely. docs/evidence.md says so."""
ALGORITHMS: tuple[str, ...] = (ML_DSA_65, ED25519)


class EvidenceError(AgbomError):
    """Base of the evidence layer's errors."""


class KeyFileError(InputError, EvidenceError):
    """A key file is missing, unreadable, of the wrong kind, or readable by others.

    The message names the file and what to do; it never holds key material.
    """


class EvidenceInvalid(EvidenceError):
    """A signature, chain or bundle does not verify. ``reason`` is a stable short code."""

    exit_code = 1

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason

    def diagnostics(self) -> str:
        return f"{self} ({self.reason})"
