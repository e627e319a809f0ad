"""Generate large, realistic AgBOM documents for benchmarks (seedable, all eight types).

    python benchmarks/gen_agbom.py 10000 --seed 7 -o /tmp/agbom-10k.json

Import it from other benchmarks with ``sys.path.insert(0, str(Path(__file__).parent))`` and
``from gen_agbom import generate_agbom``. The mix is roughly what a large fleet inventory
looks like: many tools, fewer servers and skills, a handful of models. References only point
at components created earlier, so the graph is acyclic, and every reference resolves.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

# Share of each type in the generated inventory (sums to 1).
MIX: dict[str, float] = {
    "tool": 0.40,
    "skill": 0.20,
    "agent_capability": 0.12,
    "mcp_server": 0.10,
    "a2a_peer": 0.05,
    "knowledge_source": 0.05,
    "memory_store": 0.05,
    "model": 0.03,
}
# Order of creation: things that are referenced are created before their users.
_ORDER = (
    "model",
    "tool",
    "a2a_peer",
    "knowledge_source",
    "memory_store",
    "mcp_server",
    "skill",
    "agent_capability",
)
CAPABILITIES = (
    "fs.read",
    "fs.write",
    "net.http",
    "process.execute",
    "vcs.write",
    "db.query",
    "email.send",
    "payments.charge",
)
PROVIDERS = ("anthropic", "openai", "google", "mistral", "local", "internal", "github")


def _counts(n: int) -> dict[str, int]:
    counts = {t: int(n * share) for t, share in MIX.items()}
    counts["tool"] += n - sum(counts.values())  # rounding remainder goes to tools
    return counts


def _pick(rng: random.Random, pool: list[str], low: int, high: int) -> list[str]:
    if not pool:
        return []
    k = min(len(pool), rng.randint(low, high))
    return sorted(rng.sample(pool, k))


def _provenance(rng: random.Random, i: int) -> dict[str, Any]:
    origin = rng.choice(("system", "system", "external", "user_input"))
    return {"provenance_id": f"prov-{i:07d}", "origin": origin, "source_id": "fleet-scan"}


def generate_agbom(n: int, seed: int = 0) -> dict[str, Any]:
    """An AgBOM document with ``n`` components (deterministic for a given ``seed``)."""
    rng = random.Random(seed)
    counts = _counts(n)
    ids: dict[str, list[str]] = {t: [] for t in _ORDER}
    unclaimed_tools: list[str] = []
    components: list[dict[str, Any]] = []
    serial = 0
    for ctype in _ORDER:
        for _ in range(counts[ctype]):
            serial += 1
            cid = f"{ctype.replace('_', '-')}-{serial:06d}"
            comp: dict[str, Any] = {"id": cid, "type": ctype}
            if rng.random() < 0.6:
                comp["registration_provenance"] = _provenance(rng, serial)
            if ctype == "model":
                comp |= {
                    "name": f"model-{serial}",
                    "version": f"{rng.randint(1, 4)}.{rng.randint(0, 9)}",
                    "provider": rng.choice(PROVIDERS),
                    "endpoint": f"https://llm{serial % 17}.example.com/v1",
                    "context_window": rng.choice((8192, 32768, 128000, 200000)),
                    "purl": f"pkg:huggingface/org{serial % 9}/model-{serial}",
                }
            elif ctype == "tool":
                caps = rng.sample(CAPABILITIES, rng.randint(1, 2))
                comp |= {
                    "name": f"tool_{serial}",
                    "version": rng.choice((None, f"1.{rng.randint(0, 30)}.{rng.randint(0, 9)}")),
                    "provider": rng.choice(PROVIDERS),
                    "capability": caps[0] if len(caps) == 1 else caps,
                }
                unclaimed_tools.append(cid)
            elif ctype == "a2a_peer":
                host = f"peer{serial}.example.net"
                comp |= {
                    "name": f"peer-{serial}",
                    "endpoint": f"https://{host}/a2a",
                    "protocol_version": "0.2.5",
                    "agent_card_ref": f"https://{host}/.well-known/agent-card.json",
                }
            elif ctype == "knowledge_source":
                comp |= {
                    "name": f"index-{serial}",
                    "source_type": rng.choice(("vector_db", "search_index", "knowledge_base")),
                    "endpoint": f"https://search.example.com/collections/c{serial}",
                }
            elif ctype == "memory_store":
                comp |= {
                    "name": f"memory-{serial}",
                    "scope": rng.choice(("session", "user", "tenant", "global")),
                    "store_type": rng.choice(("redis", "postgres", "in_memory")),
                    "window_size": rng.randint(10, 200),
                }
            elif ctype == "mcp_server":
                take = min(len(unclaimed_tools), rng.randint(2, 6))
                tools = sorted(unclaimed_tools[:take])
                del unclaimed_tools[:take]
                stdio = rng.random() < 0.5
                comp |= {
                    "name": f"mcp-{serial}",
                    "version": f"0.{rng.randint(1, 9)}.{rng.randint(0, 9)}",
                    "endpoint": None if stdio else f"https://mcp{serial}.example.com/mcp",
                    "tools": tools,
                    "transport": "stdio" if stdio else "streamable-http",
                }
                if stdio:
                    comp["command"] = f"npx -y @example/mcp-server-{serial}"
                    comp["purl"] = f"pkg:npm/%40example/mcp-server-{serial}"
                    comp["found_in"] = [f"/home/dev/project{serial % 40}/.mcp.json"]
                    comp["env_keys"] = ["API_BASE"]
            elif ctype == "skill":
                digest = hashlib.sha256(f"skill {serial} body\n".encode()).hexdigest()
                comp |= {
                    "name": f"skill-{serial}",
                    "description": f"Generated skill number {serial}.",
                    "definition": {
                        "ref": f"https://skills.example.com/s{serial}/SKILL.md",
                        "digest": {"algorithm": "sha256", "value": digest},
                    },
                    "declared_capabilities": sorted(rng.sample(CAPABILITIES, rng.randint(1, 3))),
                    "tools": _pick(rng, ids["tool"], 1, 3),
                    "models": _pick(rng, ids["model"], 0, 1),
                    "mcp_servers": _pick(rng, ids["mcp_server"], 0, 1),
                    "composed_skills": _pick(rng, ids["skill"][-50:], 0, 2),
                }
            elif ctype == "agent_capability":
                comp |= {
                    "name": f"capability-{serial}",
                    "description": f"Generated capability {serial}.",
                    "tools": _pick(rng, ids["tool"], 0, 2),
                    "mcp_servers": _pick(rng, ids["mcp_server"], 0, 2),
                    "a2a_peers": _pick(rng, ids["a2a_peer"], 0, 1),
                }
            ids[ctype].append(cid)
            components.append(comp)
    rng.shuffle(components)  # input order must not matter to any consumer
    return {
        "acs_version": "0.1.0",
        "agent": {"id": f"bench-agent-{seed}", "name": "Benchmark Agent", "version": "1.0.0"},
        "components": components,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="number of components")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", type=Path, help="file to write (default stdout)")
    args = parser.parse_args(argv)
    text = json.dumps(generate_agbom(args.n, args.seed), indent=1) + "\n"
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
