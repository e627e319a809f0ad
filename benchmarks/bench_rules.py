"""Rule evaluation speed: the default pack plus 200 ban rules on a 10,000-component graph.

Run: python benchmarks/bench_rules.py [--components N] [--repeat R] [--worst-case]
        [--max-length N]
Prints load/compile time, full evaluation time (best and median of R runs, wall clock and the
process's CPU time, which a loaded machine inflates less), and the time of an incremental
re-evaluation after an agbom/changed diff of a few components. ``--max-length`` overrides the
default pack's AGB-PATH-003 limit (12): the generated graph has a longer composition chain,
so by default that rule has a finding, and an incremental run must re-run it over the graph.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agbom.inventory import AgBOM, ComponentGraph, parse_component
from agbom.rules import EvalContext, load_rules
from agbom.rules.loader import default_pack_path

CAPS = ["fs.read", "fs.write", "net.http", "process.execute", "db.query", "mail.send"]
PROV = {"origin": "system"}


def build(n: int, rng: random.Random, worst: bool = False) -> list[dict[str, Any]]:
    """~50% tools, 15% servers, 20% skills (composing earlier skills), the rest mixed.

    Realistic mode: servers are pinned and skills declare what they reach, except for about
    1% of each, which carry the violations. Worst case (``worst``): every skill violates.
    """
    n_tools, n_servers, n_skills = n // 2, n * 15 // 100, n * 20 // 100
    n_other = n - n_tools - n_servers - n_skills
    comps: list[dict[str, Any]] = []
    for i in range(n_tools):
        comps.append(  # noqa: PERF401 - one builder loop per component type
            {
                "id": f"t{i}",
                "type": "tool",
                "name": f"tool-{i}",
                "version": "1.0",
                "provider": rng.choice(["acme", "globex", None]),
                "capability": rng.choice(CAPS),
            }
        )
    tools_per = max(1, n_tools // n_servers)
    for i in range(n_servers):
        bad = worst or rng.random() < 0.01
        version = rng.choice([None, "latest"]) if bad else rng.choice(["1.2.3", "2.0.0"])
        comps.append(
            {
                "id": f"s{i}",
                "type": "mcp_server",
                "name": f"server-{i}",
                "version": version,
                "endpoint": rng.choice([None, f"https://m{i}.example.com/"]),
                "tools": [f"t{j}" for j in range(i * tools_per, (i + 1) * tools_per)],
                "purl": f"pkg:npm/server-{i}@{version or 'latest'}",
                "registration_provenance": PROV,
            }
        )
    caps_of_tool = {c["id"]: c["capability"] for c in comps if c["type"] == "tool"}
    caps_of_server = {
        c["id"]: {caps_of_tool[t] for t in c["tools"]} for c in comps if c["type"] == "mcp_server"
    }
    declared_of: dict[str, set[str]] = {}
    for i in range(n_skills):
        composed = [f"k{j}" for j in rng.sample(range(i), min(2, i))] if i else []
        srv = f"s{rng.randrange(n_servers)}"
        reach = set(caps_of_server[srv]).union(*(declared_of[k] for k in composed))
        declared_of[f"k{i}"] = reach
        declared = sorted(reach)
        if worst or rng.random() < 0.01:
            declared = rng.sample(CAPS, 2)
        comps.append(
            {
                "id": f"k{i}",
                "type": "skill",
                "name": f"skill-{i}",
                "description": "d",
                "definition": {
                    "ref": f"k{i}",
                    "digest": {"algorithm": "sha256", "value": f"{i:064x}"},
                },
                "declared_capabilities": declared,
                "mcp_servers": [srv],
                "composed_skills": composed,
                "registration_provenance": PROV,
            }
        )
    for i in range(n_other):
        if i % 2:
            comps.append(
                {
                    "id": f"p{i}",
                    "type": "a2a_peer",
                    "endpoint": f"https://peer{i}.example.org",
                    "protocol_version": "0.3",
                    "registration_provenance": PROV,
                }
            )
        else:
            comps.append(
                {
                    "id": f"m{i}",
                    "type": "model",
                    "name": f"model-{i}",
                    "version": "1",
                    "provider": "acme",
                    "endpoint": None,
                    "context_window": 8192,
                }
            )
    return comps


def ban_pack(count: int) -> str:
    lines = ["pack: bench-bans", "rules:"]
    for i in range(count):
        kind = i % 4
        lines.append(f"  - id: BAN-{i:04d}")
        lines.append("    kind: ban\n    severity: high\n    action: deny")
        lines.append('    message: "banned {component.name}"')
        if kind == 0:
            lines.append(
                f"    match: {{type: mcp_server, name: server-{i * 7}, version: '<2.0.0'}}"
            )
        elif kind == 1:
            lines.append(f"    match: {{type: tool, name: tool-{i * 13}}}")
        elif kind == 2:
            lines.append(f"    match: {{purl: 'pkg:npm/server-{i * 3}', version: '^1.0.0'}}")
        else:
            lines.append(
                f"    match: {{type: a2a_peer, endpoint: {{host_suffix: bad{i}.example.net}}}}"
            )
    return "\n".join(lines) + "\n"


def timed(fn: Any, repeat: int) -> tuple[float, float, Any]:
    samples, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        samples.append((time.perf_counter() - start) * 1000)
    return min(samples), statistics.median(samples), result


def cpu_timed(fn: Any, repeat: int) -> tuple[float, float]:
    """Best and median CPU time of this process, in ms (not counting time spent descheduled)."""
    samples = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        samples.append((time.process_time() - start) * 1000)
    return min(samples), statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--components", type=int, default=10_000)
    parser.add_argument("--bans", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--worst-case", action="store_true", help="every skill violates")
    parser.add_argument("--max-length", type=int, default=None, help="AGB-PATH-003 limit")
    args = parser.parse_args()
    rng = random.Random(42)
    comps = build(args.components, rng, args.worst_case)
    # The Guardian passes the capabilities each skill was approved with; here: what it declares.
    approvals = {c["id"]: set(c["declared_capabilities"]) for c in comps if c["type"] == "skill"}
    context = EvalContext(approved_capabilities=approvals.get)
    graph = ComponentGraph(AgBOM.from_document({"components": comps}))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        default = default_pack_path().read_text()
        if args.max_length is not None:
            default = default.replace("max_length: 12", f"max_length: {args.max_length}")
        (folder / "default.yaml").write_text(default)
        (folder / "bans.yaml").write_text(ban_pack(args.bans))
        start = time.perf_counter()
        rules = load_rules(folder)
        load_ms = (time.perf_counter() - start) * 1000
    print(f"scenario: {'worst case (every skill violates)' if args.worst_case else 'realistic'}")
    print(
        f"graph: {len(graph)} components, {graph.graph.number_of_edges()} edges; "
        f"rules: {len(rules)} ({args.bans} bans + default pack)"
    )
    print(f"load + compile rules: {load_ms:.1f} ms")
    best, median, findings = timed(lambda: rules.evaluate(graph, context=context), args.repeat)
    cpu_best, cpu_median = cpu_timed(lambda: rules.evaluate(graph, context=context), args.repeat)
    print(
        f"full evaluate: best {best:.1f} ms, median {median:.1f} ms, {len(findings)} findings "
        f"(CPU: best {cpu_best:.1f} ms, median {cpu_median:.1f} ms)"
    )

    # An agbom/changed diff of a few components: a tool gains process.execute, a server is
    # unpinned, a new skill is added on top of an existing one.
    changed_tool = dict(graph.component("t10").data, capability="process.execute")
    changed_srv = dict(graph.component("s5").data, version="latest")
    new_skill = {
        "id": "k-new",
        "type": "skill",
        "name": "new",
        "description": "d",
        "definition": {"ref": "n", "digest": {"algorithm": "sha256", "value": "f" * 64}},
        "composed_skills": ["k100"],
        "registration_provenance": PROV,
    }
    for data in (changed_tool, changed_srv, new_skill):
        graph.upsert(parse_component(data))
    changed = ["t10", "s5", "k-new"]
    best_i, median_i, incremental = timed(
        lambda: rules.evaluate_incremental(graph, changed, findings, context=context), args.repeat
    )
    cpu_best_i, cpu_median_i = cpu_timed(
        lambda: rules.evaluate_incremental(graph, changed, findings, context=context), args.repeat
    )
    best_f, median_f, full = timed(lambda: rules.evaluate(graph, context=context), args.repeat)
    same = [(f.rule_id, f.components) for f in incremental] == [
        (f.rule_id, f.components) for f in full
    ]
    print(
        f"incremental after 3 changed components: best {best_i:.1f} ms, median {median_i:.1f} ms, "
        f"CPU median {cpu_median_i:.1f} ms (best {cpu_best_i:.1f} ms) "
        f"(full re-evaluation: best {best_f:.1f} ms, median {median_f:.1f} ms); "
        f"same findings as full: {same}"
    )
    component = graph.component("k-new")
    best_c, median_c, _ = timed(
        lambda: rules.evaluate_component(component, graph, context=context), 200
    )
    print(
        f"evaluate_component (skill, with graph): best {best_c * 1000:.0f} us, "
        f"median {median_c * 1000:.0f} us"
    )
    tool = graph.component("t10")
    best_t, median_t, _ = timed(lambda: rules.evaluate_component(tool), 1000)
    print(
        f"evaluate_component (tool, no graph): best {best_t * 1000:.1f} us, "
        f"median {median_t * 1000:.1f} us"
    )


if __name__ == "__main__":
    main()
