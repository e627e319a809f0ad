"""toolCallRequest cost with the baseline runtime pack (in process).

Run: ``python benchmarks/bench_runtime_pack.py [--requests R] [--rounds N]``.

Guardians in the same run, each with the default pack over a SQLite store, take turns
deciding the same requests (rounds interleaved, so machine load falls on all alike):

* the anchor: no runtime pack;
* ``--pack baseline`` with one allowed host, judging commands with the string matcher only
  (the shell parse switched off for its rounds: the pack as it was before issue 38);
* the same pack with the shell parse (agbom/analysis/), each command new to it, so the
  parse's cache never answers (``parse, cold``);
* the same, the commands repeating as an agent's often do (``parse, warm``: the cache answers).

The requests are ``Bash`` toolCallRequests of everyday shape: a short command, a command
with a URL on the allowlist piped into ``jq``, and a 2 KB script of twenty lines; in the cold
rounds each carries a different argument. Printed: the median milliseconds per request of
each, and the ratio to the anchor and to the string matcher, in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_guardian  # noqa: E402

from agbom.guardian import Guardian, GuardianConfig, build_guardian  # noqa: E402

SCRIPT = "\n".join(
    f"python -m pytest tests/test_part_{i}.py -q && git add src/part_{i}.py  # step {i}"
    for i in range(20)
)
COMMANDS = (
    "ls -la",
    "curl -s https://docs.example.com/api/items | jq '.items[] | .id'",
    SCRIPT,
)


def _guardian(folder: Path, config: GuardianConfig) -> tuple[Guardian, str]:
    g = build_guardian(folder / "store.db", config=config)
    sid = str(uuid.uuid4())
    hello = {
        "acs_versions_supported": ["0.1.0"],
        "methods_implemented": ["steps/toolCallRequest", "steps/toolCallResult"],
        "transports_supported": ["http"],
        "provenance_producer": "none",
    }
    assert "result" in g.handle(bench_guardian.envelope("handshake/hello", hello, session_id=sid))
    return g, sid


_SERIAL = iter(range(10**9))


def _round(g: Guardian, sid: str, requests: int, *, fresh: bool = False) -> float:
    bodies: list[dict[str, Any]] = []
    for i in range(requests):
        command = COMMANDS[i % len(COMMANDS)]
        if fresh:  # a command the parse cache has not seen
            command = (
                command.replace("-la", f"-la src/{next(_SERIAL)}", 1)
                .replace("jq '", f"jq --arg n {next(_SERIAL)} '", 1)
                .replace("# step 0", f"# step 0 run {next(_SERIAL)}", 1)
            )
        payload = {"tool": {"name": "Bash"}, "arguments": {"command": {"value": command}}}
        bodies.append(bench_guardian.envelope("steps/toolCallRequest", payload, session_id=sid))
    began = time.perf_counter()
    for body in bodies:
        answer = g.handle(body)
        assert answer["result"]["decision"] == "allow", answer
    return (time.perf_counter() - began) / requests * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a").mkdir()
        (root / "b").mkdir()
        anchor = _guardian(root / "a", GuardianConfig())
        packed = _guardian(
            root / "b",
            GuardianConfig(runtime_packs=("baseline",), egress_allow=("docs.example.com",)),
        )
        _round(*anchor, 30)  # warm: imports, compiled patterns, the parser
        _round(*packed, 30)
        _round(*packed, 30, fresh=True)
        names = ("anchor", "strings", "cold", "warm")
        medians: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(args.rounds):
            medians["anchor"].append(_round(*anchor, args.requests))
            with _strings_only():
                medians["strings"].append(_round(*packed, args.requests, fresh=True))
            medians["cold"].append(_round(*packed, args.requests, fresh=True))
            medians["warm"].append(_round(*packed, args.requests))
        m = {name: statistics.median(values) for name, values in medians.items()}
        a, s_ = m["anchor"], m["strings"]
        print(f"anchor (no runtime pack):        {a:.3f} ms/request (median of {args.rounds})")
        print(f"--pack baseline, strings only:   {s_:.3f} ms/request, {s_ / a:.2f}x the anchor")
        for name in ("cold", "warm"):
            v = m[name]
            print(
                f"--pack baseline, parse, {name}:    {v:.3f} ms/request, {v / a:.2f}x the "
                f"anchor, {v / s_:.2f}x strings only"
            )
        for g, _ in (anchor, packed):
            g.store.close()


@contextlib.contextmanager
def _strings_only() -> Iterator[None]:
    """The pack without the shell parse: every command assessed as having no commands."""
    import agbom.analysis as analysis

    real = analysis.assess

    def empty(text: str) -> Any:
        nothing = analysis.Analysis(text, (), (), (), True, (), False)
        return analysis.Assessment(nothing, (), ())

    analysis.assess = empty  # type: ignore[assignment]
    try:
        yield
    finally:
        analysis.assess = real  # type: ignore[assignment]


if __name__ == "__main__":
    main()
