"""``serve --signing-key`` and ``--sign-responses``: the Guardian's own asymmetric keys
(agbom/guardian/signing.py, docs/evidence.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from agbom.cli.common import choice


def signing_key_option() -> Any:
    return typer.Option(
        [],
        "--signing-key",
        metavar="FILE",
        help="A private key from 'agbom keys generate' (ML-DSA-65 or Ed25519, mode 0600): "
        "responses are signed with it, acs-crypto is accepted when it is ML-DSA-65, ended "
        "sessions' heads are sealed, and its public key is served at GET /v1/keys. "
        "Repeatable: the first signs, later ones are published for a rotation.",
    )


def sign_responses_option() -> Any:
    return typer.Option(
        "all",
        "--sign-responses",
        metavar="[all|non-allow]",
        help="With --signing-key: sign every response (default), or only ServerHellos, "
        "errors and decisions other than ALLOW.",
    )


def retired_key_option() -> Any:
    return typer.Option(
        [],
        "--retired-key",
        metavar="FILE.pub",
        help="A public key (PEM or JWKS) whose private key no longer signs, also served at "
        "GET /v1/keys so that what it signed still verifies after a rotation. Repeatable.",
    )


def signing_settings(
    keys: list[Path], scope: str, retired: list[Path] | None = None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The GuardianConfig fields of the options, and the public keys ``GET /v1/keys`` serves
    (None without a key).

    Every key is read once here, so that a bad or world-readable key file is one error line
    before anything starts. The decision process reads the files again by their absolute
    paths: no key material is passed on, on its command line or otherwise.
    """
    scope = choice(scope, ("all", "non-allow"), "--sign-responses")
    old = []
    if retired:
        from agbom.evidence import KeySet

        old = list(KeySet.from_files(retired))
    if not keys:
        if scope != "all":
            raise typer.BadParameter("--sign-responses needs --signing-key")
        if not old:
            return {}, None
        from agbom.guardian.signing import published_keys

        return {}, published_keys(old)
    from agbom.guardian.signing import WireSigner

    signer = WireSigner.from_files(keys, scope=scope)
    settings = {"signing_keys": tuple(str(k.absolute()) for k in keys), "sign_responses": scope}
    return settings, signer.jwks(old)
