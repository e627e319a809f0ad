"""The lineage keeps every answer current as nodes arrive (issue 39): checked against a plain
walk of the whole ancestry, on random graphs with cycles, self-references, forward references
and ids never delivered, queried between arrivals."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agbom.protocol.provenance import ORIGINS, ProvenanceNode
from agbom.rules.lineage import Lineage, Trust, TrustPolicy

WANTED = frozenset({"tool_output", "retrieved"})


def wanted(node: ProvenanceNode) -> bool:
    return node.origin in WANTED


def reachable(nodes: dict[str, ProvenanceNode], start: str) -> set[str]:
    """Every id reachable from ``start`` along derived_from edges (itself included)."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        pid = stack.pop()
        if pid not in seen:
            seen.add(pid)
            node = nodes.get(pid)
            stack.extend(node.derived_from if node is not None else ())
    return seen


def ancestry(nodes: dict[str, ProvenanceNode], start: str) -> tuple[set[str], bool]:
    """Every id reachable from ``start``, and whether that ancestry is complete (every id
    delivered) and acyclic (no id reachable from one of its own parents)."""
    seen = reachable(nodes, start)
    if any(pid not in nodes for pid in seen):
        return seen, False
    for pid in seen:
        if any(pid in reachable(nodes, parent) for parent in nodes[pid].derived_from):
            return seen, False
    return seen, True


def reference_trust(nodes: dict[str, ProvenanceNode], pid: str, policy: TrustPolicy) -> Trust:
    if pid not in nodes:
        return Trust.UNKNOWN
    seen, complete = ancestry(nodes, pid)
    values = [policy.base(nodes[p])[0] for p in seen if p in nodes]
    return min(values) if complete else min([Trust.UNKNOWN, *values])


def reference_reaches(
    nodes: dict[str, ProvenanceNode], probe: ProvenanceNode, policy: TrustPolicy
) -> bool:
    def own(node: ProvenanceNode) -> bool:
        return policy.base(node)[0] < Trust.TRUSTED and wanted(node)

    if own(probe):
        return True
    for parent in probe.derived_from:
        seen, complete = ancestry(nodes, parent)
        if not complete or any(own(nodes[p]) for p in seen):
            return True
    return False


@st.composite
def sessions(draw: st.DrawFn) -> tuple[list[ProvenanceNode], list[int]]:
    size = draw(st.integers(min_value=1, max_value=18))
    ids = [f"n{i}" for i in range(size)] + ["ghost"]
    out = []
    for i in range(size):
        origin = draw(st.sampled_from(ORIGINS))
        parents = draw(st.lists(st.sampled_from(ids), max_size=4, unique=True))
        hint = draw(st.sampled_from([None, None, None, "untrusted", "unknown", "trusted"]))
        out.append(
            ProvenanceNode(
                provenance_id=f"n{i}", origin=origin, derived_from=tuple(parents), trust_hint=hint
            )
        )
    order = draw(st.permutations(range(size)))
    return out, list(order)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(sessions())
def test_every_answer_equals_a_walk_of_the_whole_ancestry(
    session: tuple[list[ProvenanceNode], list[int]],
) -> None:
    nodes, order = session
    policy = TrustPolicy()
    lineage = Lineage(policy)
    held: dict[str, ProvenanceNode] = {}
    all_ids = [n.provenance_id for n in nodes] + ["ghost"]
    for index in order:
        node = nodes[index]
        assert lineage.add(node)
        held[node.provenance_id] = node
        for pid in all_ids:
            probe = ProvenanceNode(
                provenance_id="probe", origin="agent_generated", derived_from=(pid,)
            )
            verdict = lineage.verdict(probe)
            assert verdict.trust is min(Trust.TRUSTED, reference_trust(held, pid, policy)), (
                pid,
                held,
            )
            # The path follows derived_from edges from the probe.
            for child, parent in zip(verdict.path, verdict.path[1:], strict=False):
                owner = probe if child == "probe" else held[child]
                assert parent in owner.derived_from
            found = lineage.reaches(probe, 1, wanted)
            assert (found is not None) is reference_reaches(held, probe, policy), (pid, held)
            if found is not None:
                for child, parent in zip(found, found[1:], strict=False):
                    owner = probe if child == "probe" else held[child]
                    assert parent in owner.derived_from
                last = held.get(found[-1])
                # It ends at a wanted source, at an id not delivered, or on an open node.
                assert (
                    last is None
                    or wanted(last)
                    or not lineage.settled(found[-1])
                    or (len(found) == 12)
                )


def test_a_query_over_an_unsettled_lineage_does_not_walk_it() -> None:
    # 20,000 nodes in one chain from an id never delivered: none of them ever settles.
    lineage = Lineage()
    lineage.add_all(
        ProvenanceNode(
            provenance_id=f"n{i}",
            origin="agent_generated",
            derived_from=(f"n{i - 1}" if i else "ghost",),
        )
        for i in range(20_000)
    )
    before = lineage.work
    probe = ProvenanceNode(
        provenance_id="arg",
        origin="agent_generated",
        derived_from=tuple(f"n{i}" for i in range(0, 20_000, 79)),
    )
    for _ in range(10):
        assert lineage.verdict(probe).trust is Trust.UNKNOWN
        assert lineage.reaches(probe, 7, wanted) is not None
    # Ten verdicts and ten filtered queries of 254 parents: the parents and two 12-hop paths
    # each, not the 20,000 nodes behind them.
    assert lineage.work - before <= 10 * (2 * 254 + 2 * 12 + 2)
    # The id arrives: everything settles, once.
    lineage.add(ProvenanceNode(provenance_id="ghost", origin="user_input"))
    assert all(lineage.settled(f"n{i}") for i in range(20_000))
    assert lineage.verdict(probe).trust is Trust.TRUSTED
    assert lineage.reaches(probe, 7, wanted) is None
