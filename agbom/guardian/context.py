"""What a policy may use of the Guardian, as a protocol below the policies.

The per-method policies (:mod:`agbom.guardian.policy_base` and the modules built on it) are
given the Guardian as a :class:`PolicyHost` and use only this of it: the store, the compiled
rules, the configuration, session persistence and the snapshot prepared for the request
being decided. They never import :mod:`agbom.guardian.core`, so the Guardian's module sits
above them; no other module under ``guardian/`` imports it (issue 44 item 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agbom.inventory import AgBOM, ComponentGraph
from agbom.protocol import AcsError
from agbom.rules import Finding

if TYPE_CHECKING:
    from agbom.guardian.config import GuardianConfig
    from agbom.guardian.session import SessionState
    from agbom.rules import RuleSet
    from agbom.store import Store


@dataclass(slots=True)
class PreparedSnapshot:
    """The state-free work of an ``agbom/snapshot``, done ahead and off the Guardian's lock
    (see :meth:`Guardian.prepare`): the validated inventory, its graph, its findings and its
    stored form, or the payload's refusal."""

    params: dict[str, Any]  # the request's params object: the work is for that request only
    agent_id: str
    tenant_id: str | None
    agbom: AgBOM | None = None
    graph: ComponentGraph | None = None
    findings: list[Finding] | None = None
    document: Mapping[str, Any] | None = None
    error: AcsError | None = None


class PolicyHost(Protocol):
    """The Guardian as its policies see it (:class:`agbom.guardian.Guardian` is one)."""

    @property
    def store(self) -> Store: ...

    @property
    def rules(self) -> RuleSet: ...

    @property
    def config(self) -> GuardianConfig: ...

    def _persist_session(self, session: SessionState, *, status: str) -> None:
        """Write the session's row (its status, negotiation and keys) to the store."""
        ...

    def prepared_for(
        self, params: dict[str, Any], session: SessionState
    ) -> PreparedSnapshot | None:
        """The snapshot work prepared for this very request and session, if any."""
        ...
