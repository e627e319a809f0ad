"""The skill methods' policies: registration, load and unload, judged against the store's
approvals, the load path and the rules (split from :mod:`agbom.guardian.policies`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agbom.guardian.decision import Decision, DecisionCollector, PolicyReference
from agbom.inventory import (
    Component,
    ComponentGraph,
    ComponentType,
)
from agbom.protocol import AcsError, Disposition
from agbom.protocol import errors as codes
from agbom.rules.matchers import covered_by_any, normalize_caps
from agbom.store import Digest, SkillRecord, StoreError

if TYPE_CHECKING:
    from agbom.guardian.session import SessionState

from agbom.guardian.policy_base import PolicyBase

# The digest a client sends for a skill it found no files for (hooks: not on the disk).
_NO_FILES = "0" * 64


def approval_hint(
    skill_id: str, digest: str, public_url: str | None, store: str | None = None
) -> str:
    """What a skill denial tells the user to do, as one link or one command that works where
    a person runs it: the review page of the pair when ``serve --public-url`` gave one, else
    ``agbom skills approve`` naming the store that decides (``store``: a file path, or a
    URL without its password), not the default store of whoever runs it."""
    import shlex
    from urllib.parse import urlencode

    if public_url:
        query = urlencode({"id": skill_id, "digest": digest})
        return f"; review it at {public_url.rstrip('/')}/ui/skill?{query}"
    command = f"agbom skills approve {shlex.quote(skill_id)} --digest {shlex.quote(digest)}"
    if store:
        command += f" --db {shlex.quote(store)}"
    return f"; to approve it: {command} --reason '...'"


def command_store(location: str) -> str:
    """``--db`` for a store's :attr:`~agbom.store.interface.StoreLifecycle.location`: an
    absolute file path, or the URL without any password (``user:***@`` becomes ``user@``;
    the password comes from the client's own PGPASSWORD or .pgpass)."""
    import os
    import re

    if "://" not in location:
        return os.path.abspath(location)
    location = re.sub(r"://([^:@/?#]*):\*\*\*@", r"://\1@", location)
    location = re.sub(r"([?&])(?:ssl)?password=\*\*\*&?", r"\1", location)
    return location.rstrip("?&")


def changed_files(before: Any, after: Any, *, limit: int = 4) -> str:
    """Which files differ between two stored definitions' file lists (``SKILL.md,
    scripts/up.sh changed; new.sh added``), or "" when either list is unknown."""

    def files(definition: Any) -> dict[str, str] | None:
        listed = definition.get("files") if isinstance(definition, Mapping) else None
        if not isinstance(listed, list):
            return None
        return {
            str(f["path"]): str(f.get("sha256"))
            for f in listed
            if isinstance(f, Mapping) and isinstance(f.get("path"), str)
        }

    old, new = files(before), files(after)
    if old is None or new is None:
        return ""
    groups = (
        ("changed", sorted(p for p in new if p in old and new[p] != old[p])),
        ("added", sorted(p for p in new if p not in old)),
        ("removed", sorted(p for p in old if p not in new)),
    )
    parts = []
    for label, paths in groups:
        if paths:
            shown = ", ".join(paths[:limit])
            more = f" and {len(paths) - limit} more" if len(paths) > limit else ""
            parts.append(f"{shown}{more} {label}")
    return "; ".join(parts)


_NOT_APPROVED = {
    "pending": "is not approved yet (pending review)",
    "unknown": "is not approved yet (never registered)",
    "denied": "was denied by a reviewer",
    "revoked": "had its approval revoked",
    "expired": "has an approval that expired",
    "out_of_scope": "is approved, but not for this agent",
}


# Statuses of a skill verdict and the reason code each denial carries.
_SKILL_DENIAL = {
    "pending": "approval_pending",
    "unknown": "approval_pending",
    "denied": "skill_denied",
    "revoked": "skill_revoked",
    "expired": "approval_expired",
    "out_of_scope": "approval_out_of_scope",
}


class SkillPolicies(PolicyBase):
    """Skill registration, load and unload."""

    def _skill_register(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        config, store = self.g.config, self.g.store
        skill_id: str = payload["skill_id"]
        definition = payload["definition"]
        try:
            digest = Digest.from_wire(definition["digest"])
        except StoreError as exc:
            raise AcsError(codes.INVALID_PARAMS, "invalid_digest", str(exc)) from exc
        if self._pending is not None:
            self._pending.skill_pair = (skill_id, digest.algorithm, digest.value)
        composition = payload.get("composition") or {}
        declared = [str(c) for c in payload.get("declared_capabilities") or []]
        previously_approved = [d for d in store.approved_digests(skill_id) if d != digest]
        store.record_registration(
            skill_id=skill_id,
            digest=digest,
            ref=definition.get("ref"),
            declared_capabilities=declared,
            composition=composition,
            provenance=payload.get("registration_provenance"),
            agent_id=session.agent_id,
            tenant_id=session.tenant_id,
        )
        not_text = None
        if "body" in definition:  # for the review page; never part of the decision
            from agbom.review.definition import remember, skill_md_problem

            remember(store, skill_id, digest, definition["body"])
            # ... but for a SKILL.md the body says is not text: refused, as no reviewer can
            # read it on the page and the model reads it as text all the same.
            not_text = skill_md_problem(definition["body"])
        skill = self._skill_component(skill_id, definition, declared, composition, session)
        graph = self._graph_with(session, skill)
        self._pending_graph(graph)
        collector = DecisionCollector()
        if not_text is not None:
            collector.denials.append(
                Decision.deny(
                    f"skill {skill_id} {digest}: {not_text}",
                    "skill_md_not_text",
                    references=[PolicyReference(policy_id="agbom", rule_id="skill-definition")],
                )
            )
        if previously_approved:
            collector.codes.append("artifact_changed")
        if config.skill_signers_path is not None:  # serve --skill-signers (skill_trust.py)
            self._signature_at_registration(collector, skill_id, digest, definition)
        verdict = store.verdict(
            skill_id, digest, agent_id=session.agent_id, tenant_id=session.tenant_id
        )
        if verdict.approved and verdict.record is not None:
            exceeding = _capabilities_exceeding(skill_id, declared, verdict.record)
            if exceeding is not None:
                collector.denials.append(exceeding)
            self._required_signer(collector, verdict.record, definition.get("body"))
        if not verdict.approved:
            code = _SKILL_DENIAL.get(verdict.status, "approval_pending")
            message = self._not_approved(skill_id, digest, verdict.status, previously_approved)
            if config.mode == "observe" and verdict.status in ("pending", "unknown"):
                collector.codes.extend(["observe_mode", code])
            else:
                collector.denials.append(
                    Decision.deny(
                        message,
                        code,
                        references=[PolicyReference(policy_id="agbom", rule_id="skill-approval")],
                    )
                )
        unknown = [t for t in composition.get("tools") or [] if graph.component(str(t)) is None]
        if unknown:
            # Capabilities of tools the inventory has never described cannot be checked: say so
            # on the record rather than pass silently (the approval still decides).
            collector.codes.append("composition_unverified")
        if config.deny_overbroad_capabilities:
            over = self._overbroad(declared, composition, graph)
            if over:
                collector.denials.append(
                    Decision.deny(
                        f"skill {skill_id} declares {', '.join(over)}, "
                        "which none of its tools expose",
                        "capabilities_overbroad",
                        references=[
                            PolicyReference(policy_id="agbom", rule_id="skill-least-privilege")
                        ],
                    )
                )
        self._skill_rules(collector, skill, graph, session)
        return collector.merge()

    def _signature_at_registration(
        self, collector: DecisionCollector, skill_id: str, digest: Digest, definition: Any
    ) -> None:
        """The carried signature, verified against the signers file: recorded on the decision
        (and so in the audit chain), a failing one denied, and a trusted signer's skill
        approved when the trust policy names them (recorded as such in the history)."""
        from agbom.guardian.skill_trust import (
            TRUST_POLICY_ACTOR,
            auto_approver,
            shown,
            signature_of,
            signers_of,
        )

        store = self.g.store
        config = self.g.config
        trust = signers_of(config.skill_signers_path, config.sigstore_trust_root_path)
        if trust is None:
            return
        said = signature_of(definition.get("body"), digest, trust)
        if said is None:
            return
        collector.warnings.append({"rule_id": "skill-signature", "components": [skill_id],
                                   "message": f"skill {skill_id}: {shown(said)}",
                                   "signature": said})  # fmt: skip
        required = isinstance(trust, str) or trust.require_signature
        status = said.get("status")
        if status in ("invalid", "partial", "unsigned") or (status != "signed" and required):
            collector.denials.append(
                Decision.deny(
                    f"skill {skill_id} {digest}: {shown(said)}",
                    "signature_invalid" if status != "unsigned" else "signature_required",
                    references=[PolicyReference(policy_id="agbom", rule_id="skill-signature")],
                )
            )
            return
        approver = auto_approver(said, trust)
        record = store.get_skill(skill_id, digest)
        if approver is None or record is None or record.status != "pending":
            return  # a person's decision (denied, revoked) is never overridden
        source = trust.source if not isinstance(trust, str) else ""
        store.set_status(
            skill_id,
            digest,
            "approved",
            actor=f"{TRUST_POLICY_ACTOR}:{approver}",
            reason=f"signed by {approver}, whose skills the trust policy ({source}) approves",
            source=TRUST_POLICY_ACTOR,
        )
        collector.codes.append("approved_by_trust_policy")

    def _required_signer(
        self, collector: DecisionCollector, record: SkillRecord, body: Any = None
    ) -> None:
        """An approval that requires a signer (``skills approve --require-signer``) holds only
        while that signer's signature verifies over the skill: otherwise the registration or
        load is denied, also when the Guardian has no signers file (fail closed)."""
        if record.required_signer is None:
            return
        from agbom.guardian.skill_trust import signer_denial

        denied = signer_denial(self.g.store, record.skill_id, record.digest,
                               record.required_signer, self.g.config.skill_signers_path,
                               body, self.g.config.sigstore_trust_root_path)  # fmt: skip
        if denied is not None:
            collector.denials.append(
                Decision.deny(
                    denied,
                    "signer_required",
                    references=[
                        PolicyReference(policy_id="agbom", rule_id="skill-approval-signer")
                    ],
                    findings=[
                        {
                            "rule_id": "skill-approval-signer",
                            "components": [record.skill_id],
                            "required_signer": record.required_signer,
                        }
                    ],
                )  # fmt: skip
            )

    def _skill_rules(
        self,
        collector: DecisionCollector,
        skill: Component,
        graph: ComponentGraph,
        session: SessionState,
    ) -> None:
        """Rule findings on a skill join ``collector``: denials, asks, and warnings."""
        context = self._context(session, graph)
        findings = self.g.rules.evaluate_component(skill, graph, context=context)
        verdict = self._findings_decision(findings, what=f"skill {skill.id}")
        if verdict.disposition is Disposition.DENY:
            collector.denials.append(verdict)
        elif verdict.disposition is Disposition.ASK:
            collector.asks.append(verdict)
        else:
            collector.warnings.extend(verdict.findings)
            collector.codes.extend(verdict.reason_codes)

    def _not_approved(
        self, skill_id: str, digest: Digest, status: str, approved: list[Digest]
    ) -> str:
        """The short reason a pair is not approved: what happened (for a skill that changed
        since its approval, which files), then the one link or command that resolves it."""
        config, store = self.g.config, self.g.store
        if approved and status in ("unknown", "pending"):
            try:
                files = changed_files(
                    store.skill_definition(skill_id, approved[0]),
                    store.skill_definition(skill_id, digest),
                )
            except StoreError:
                files = ""
            # The changed files say what to look at; without them (a definition not kept),
            # the approved digest is what 'agbom skills diff --from' needs.
            what = f"{skill_id} changed since it was approved" + (
                f" ({files})" if files else f" as {approved[0]}"
            )
        else:
            what = f"{skill_id} {_NOT_APPROVED.get(status, f'is {status}')}"
        location = getattr(store, "location", None)
        where = command_store(location) if isinstance(location, str) and location else None
        return what + approval_hint(skill_id, str(digest), config.public_url, where)

    def _overbroad(
        self, declared: list[str], composition: Mapping[str, Any], graph: ComponentGraph
    ) -> list[str]:
        tool_ids = composition.get("tools") or []
        if not tool_ids or not declared:
            return []
        exposed: set[str] = set()
        for tool_id in tool_ids:
            component = graph.component(tool_id)
            if component is None:
                return []  # cannot judge tools we have never seen
            capability = component.get("capability")
            if isinstance(capability, str):
                exposed.add(capability)
            elif isinstance(capability, list):
                exposed.update(str(c) for c in capability)
        return [
            cap
            for cap in declared
            if not any(e == cap or e.startswith(cap.rstrip("*").rstrip(".") + ".") for e in exposed)
        ]

    def _skill_component(
        self,
        skill_id: str,
        definition: Mapping[str, Any],
        declared: list[str],
        composition: Mapping[str, Any],
        session: SessionState,
    ) -> Component:
        existing = session.agbom.get(skill_id) if session.agbom is not None else None
        data: dict[str, Any] = dict(existing.data) if existing is not None else {}
        data.update(
            {
                "id": skill_id,
                "type": "skill",
                "name": data.get("name") or skill_id,
                "description": data.get("description") or "",
                "definition": {"ref": definition.get("ref") or "", "digest": definition["digest"]},
                "declared_capabilities": declared,
            }
        )
        for key in ("tools", "mcp_servers", "a2a_peers", "models", "composed_skills"):
            if composition.get(key):
                data[key] = [str(x) for x in composition[key]]
        return Component(id=skill_id, type=ComponentType.SKILL, data=data)

    def _graph_with(self, session: SessionState, skill: Component) -> ComponentGraph:
        """A copy of the session graph with ``skill`` (and its composition edges) upserted."""
        graph = (
            ComponentGraph(session.agbom) if session.graph is None else _copy_graph(session.graph)
        )
        graph.upsert(skill)
        return graph

    def _pending_graph(self, graph: ComponentGraph) -> None:
        if self._pending is not None:
            self._pending.graph = graph

    def _composed_skills(self, skill_id: str, session: SessionState) -> set[str] | None:
        """The skills ``skill_id`` declares it may load, from the session or its registration."""
        graph = session.graph
        if graph is not None:
            component = graph.component(skill_id)
            if component is not None and component.type is ComponentType.SKILL:
                return set(component.get("composed_skills") or [])
        found: set[str] | None = None
        for record in self.g.store.skill_records(skill_id):
            composed = (record.composition or {}).get("composed_skills")
            found = (found or set()) | set(composed or [])
        return found

    def _skill_load(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        config, store = self.g.config, self.g.store
        skill_id: str = payload["skill_id"]
        try:
            digest = Digest.from_wire(payload["digest"])
        except StoreError as exc:
            raise AcsError(codes.INVALID_PARAMS, "invalid_digest", str(exc)) from exc
        path = [str(step.get("skill_id")) for step in payload.get("load_path") or []]
        if not path or path[-1] != skill_id:
            path.append(skill_id)
        shown = " -> ".join(path)
        collector = DecisionCollector()

        def deny(message: str, code: str, rule: str) -> None:
            collector.denials.append(
                Decision.deny(
                    message,
                    code,
                    references=[PolicyReference(policy_id="agbom", rule_id=rule)],
                    findings=[{"rule_id": rule, "path": path, "components": [skill_id]}],
                )
            )

        # A load stands on the registration of its pair: one this session saw denied (over-broad,
        # beyond its approval, ...) cannot be loaded, whatever the load message itself carries.
        # The Guardian checks the binding itself; digest_verified from the framework is ignored.
        verdict = store.verdict(
            skill_id, digest, agent_id=session.agent_id, tenant_id=session.tenant_id
        )
        if session.registration_denied((skill_id, digest.algorithm, digest.value)):
            if verdict.approved:
                deny(
                    f"the registration of {skill_id} in this session was denied (see its "
                    "decision); it loads once registered again within its approval",
                    "registration_denied",
                    "skill-load-registration",
                )
            else:
                # The approval denial below says what happened and what resolves it.
                collector.codes.append("registration_denied")
        missing = digest.algorithm == "sha256" and digest.value == _NO_FILES
        if missing and not verdict.approved:
            # What a hook sends for a skill it cannot find or digest: not a changed skill.
            deny(
                f"skill {skill_id} was not found (or could not be digested) where the agent "
                "runs, so there is nothing to check against an approval",
                "skill_not_found",
                "skill-load-approval",
            )
        elif not verdict.approved:
            approved = store.approved_digests(skill_id)
            drift = bool(approved) and verdict.status in ("unknown", "pending")
            if drift:
                deny(
                    self._not_approved(skill_id, digest, verdict.status, approved),
                    "digest_mismatch",
                    "skill-load-digest",
                )
            elif verdict.status in ("pending", "unknown") and config.mode == "observe":
                collector.codes.extend(["observe_mode", "skill_unverifiable"])
            else:
                code = (
                    "skill_unverifiable"
                    if verdict.status == "unknown"
                    else _SKILL_DENIAL.get(verdict.status, "skill_unverifiable")
                )
                deny(
                    self._not_approved(skill_id, digest, verdict.status, []),
                    code,
                    "skill-load-approval",
                )
        if verdict.approved and config.skill_signers_path is not None:
            from agbom.guardian.skill_trust import shown as in_words
            from agbom.guardian.skill_trust import signers_of, stored_signature

            trust = signers_of(config.skill_signers_path, config.sigstore_trust_root_path)
            said = stored_signature(store, skill_id, digest, trust) if trust is not None else None
            if said is not None and said.get("status") != "signed":
                # Judged again now: a signer dropped from the signers file, or a signature
                # that no longer verifies, stops the load whatever the approval says.
                deny(f"skill {skill_id} {digest}: {in_words(said)}", "signature_invalid",
                     "skill-load-signature")  # fmt: skip
        if verdict.approved and verdict.record is not None:
            self._required_signer(collector, verdict.record)
        load_declared = payload.get("declared_capabilities")
        if verdict.approved and verdict.record is not None and isinstance(load_declared, list):
            exceeding = _capabilities_exceeding(
                skill_id, [str(c) for c in load_declared], verdict.record
            )
            if exceeding is not None:
                collector.denials.append(exceeding)
        if len(set(path)) != len(path):
            deny(f"load path revisits a skill: {shown}", "load_path_cycle", "skill-load-cycle")
        if len(path) > config.max_load_path_depth:
            deny(
                f"load path is {len(path)} deep, over the limit of "
                f"{config.max_load_path_depth}: {shown}",
                "load_path_too_deep",
                "skill-load-depth",
            )
        for parent, child in zip(path, path[1:], strict=False):
            allowed = self._composed_skills(parent, session)
            if allowed is None or child not in allowed:
                deny(
                    f"{parent} loaded {child}, which is outside its declared composed_skills "
                    f"(path {shown})",
                    "composition_violation",
                    "skill-load-composition",
                )
                break
        record = verdict.record
        skill = self._skill_component(
            skill_id,
            {"ref": record.ref if record else "", "digest": digest.to_wire()},
            list(record.declared_capabilities) if record else [],
            record.composition if record else {},
            session,
        )
        graph = self._graph_with(session, skill)
        self._pending_graph(graph)
        self._skill_rules(collector, skill, graph, session)
        return collector.merge()

    def _skill_unload(
        self, payload: dict[str, Any], params: dict[str, Any], session: SessionState
    ) -> Decision:
        skill_id = payload["skill_id"]
        count = self.g.store.record_skill_event(session.session_id, skill_id, "unload")
        codes_: list[str] = []
        if count >= self.g.config.skill_churn_threshold:
            codes_.append("skill_churn")
        return Decision.allow(
            reason_codes=codes_,
            reasoning=f"{skill_id} unloaded {count} times in this session" if codes_ else None,
        )


def _copy_graph(graph: ComponentGraph) -> ComponentGraph:
    clone = ComponentGraph()
    clone.graph = graph.graph.copy()
    clone.agent = dict(graph.agent)
    return clone


def _capabilities_exceeding(
    skill_id: str, declared: Iterable[str], record: SkillRecord
) -> Decision | None:
    """A denial when ``declared`` asks for capabilities the approved ``record`` does not cover.

    Coverage is the rules layer's (``fs`` and ``fs.*`` cover ``fs.read``), so this check and
    ``unless: approved_capabilities`` agree on what an approval grants.
    """
    approved = record.declared_capabilities
    granted = normalize_caps(approved)
    extra = [
        cap
        for cap in dict.fromkeys(c.strip() for c in declared)
        if cap and not covered_by_any(granted, cap)
    ]
    if not extra:
        return None
    return Decision.deny(
        f"skill {skill_id} {record.digest} declares {', '.join(extra)}, beyond what it was "
        f"approved with ({', '.join(approved) or 'no capabilities'}); approve the pair again "
        "with these capabilities to allow them",
        "capabilities_exceed_approval",
        references=[PolicyReference(policy_id="agbom", rule_id="skill-approved-capabilities")],
    )
