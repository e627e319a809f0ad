"""Guardian layer: the ACS decision pipeline over the store, the rules and the inventory.

The decision path (``Guardian._handle`` in ``core.py``) runs these stages in order, each a
module of ``stages/`` taking the request's ``RequestContext`` (``stages/request.py``); the
first that refuses answers with its error (``Guardian._answer`` signs it as stage 8 would):

1. envelope (stages/envelope.py): parse and validate the envelope and its ACS version
2. authenticate (stages/authenticate.py): the request's signature, or that it may be unsigned
3. session (stages/session.py): resolve the session, or restore it from the store
4. clock and replay (stages/replay.py): a new request id and nonce, the session admits it,
   the timestamp within the skew window
5. decide (stages/decide.py): the payload schema, then the method's policy, clamped
6. append (stages/chain.py): the ContextEntry committed to the session's chain (or queued)
7. respond (stages/respond.py): the JSON-RPC response object
8. sign (stages/sign.py): the response signed as the request was

``system/ping`` is answered after stage 1 and ``handshake/hello`` after stage 2 (with its
clock checked), both in ``core.py``. The Guardian has two parts that outlive a request:
``SessionMemory`` (``memory.py``, the sessions held in memory) and ``PipelinedCommits``
(``pipelined.py``, the queue of chain entries committed in batches). The policies
(``policies.py`` and the ``policy_*.py`` beside it) see the Guardian only as a ``PolicyHost``
(``context.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agbom.guardian.config import GuardianConfig, Mode
from agbom.guardian.core import Guardian
from agbom.guardian.decision import Decision, PolicyReference, clamp
from agbom.protocol import KeyRing
from agbom.protocol.signatures import DEFAULT_KEY_ID

if TYPE_CHECKING:
    from agbom.guardian.signals import GuardianSignals
    from agbom.telemetry import DecisionObserver

__all__ = [
    "Decision",
    "Guardian",
    "GuardianConfig",
    "Mode",
    "PolicyReference",
    "build_guardian",
    "clamp",
]


def build_guardian(
    db: Path | str,
    rules: Path | str | None = None,
    *,
    mode: str = "enforce",
    secret_file: Path | str | None = None,
    key_id: str | None = None,
    keys_file: Path | str | None = None,
    config: GuardianConfig | None = None,
    transport: str | None = None,
    with_default_rules: bool = False,
    signals: GuardianSignals | None = None,
) -> Guardian:
    """Open the store, compile the rules and return a ready Guardian (the entry points' helper).

    ``secret_file`` holds one key (its id ``key_id``, default ``default``); ``keys_file`` holds
    several, for a rotation (``key_id`` then names the primary one). Both are read as
    ``config.secret_encoding`` says (default: the raw bytes, as the reference tools read
    them). ``transport`` is what the Guardian is served over, checked against each
    ClientHello. ``with_default_rules`` adds the packaged default pack to the packs at
    ``rules`` (the CLI's ``--rules``).
    ``signals`` are the loaded ``config.osv_path``/``lock_path`` (loaded here when not given).
    """
    from dataclasses import replace

    from agbom.rules import load_rules
    from agbom.store import open_store

    base = config or GuardianConfig()
    ruleset = load_rules(
        Path(rules) if rules is not None else None,
        with_default=with_default_rules,
        shipped=base.rule_packs,
    )
    if signals is None and (base.osv_path is not None or base.lock_path is not None):
        from agbom.guardian.signals import GuardianSignals

        signals = GuardianSignals(
            Path(base.osv_path) if base.osv_path is not None else None,
            Path(base.lock_path) if base.lock_path is not None else None,
            vex=[Path(p) for p in base.vex_paths],
        )
    store = open_store(db)
    keyring: KeyRing | None = None
    encoding = base.secret_encoding
    if keys_file is not None:
        keyring = KeyRing.from_keys_file(keys_file, key_id, encoding=encoding)
    elif secret_file is not None:
        keyring = KeyRing.from_file(secret_file, key_id or DEFAULT_KEY_ID, encoding=encoding)
    guardian = Guardian(
        store=store,
        rules=ruleset,
        config=replace(base, mode=Mode(mode)),
        keyring=keyring,
        transport=transport,
        observer=_observer(base),
    )
    guardian.policies.signals = signals
    return guardian


def _observer(config: GuardianConfig) -> DecisionObserver | None:
    """The telemetry sinks ``config`` asks for (imported only when it asks for one)."""
    if config.decision_log is None and config.otlp_endpoint is None:
        return None
    from agbom.telemetry import TelemetrySettings, open_telemetry

    return open_telemetry(
        TelemetrySettings(
            decision_log=config.decision_log,
            decision_log_max_bytes=config.decision_log_max_bytes,
            decision_log_keep=config.decision_log_keep,
            otlp_endpoint=config.otlp_endpoint,
        )
    )
