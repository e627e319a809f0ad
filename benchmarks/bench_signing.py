"""What signing a response costs the Guardian (issue 31), in process, per algorithm.

Run: ``python benchmarks/bench_signing.py [--requests N] [--rounds R]``.

Five Guardians in the same run, each over its own SQLite file, deciding the same
``steps/toolCallRequest`` (parse, validate, policy, chain append committed, answer):

* the anchor: no key at all, unsigned request, unsigned answer;
* HMAC-SHA256 (``--secret-file``): the request HMAC-signed by the client (verified) and the
  answer HMAC-signed, the ACS-Core baseline;
* Ed25519 (``--signing-key``): unsigned request, answer signed with Ed25519;
* ML-DSA-65 (``--signing-key``, session that accepted ``acs-crypto``): answer signed with
  ML-DSA-65;
* non-allow: the same with ``--sign-responses non-allow``, where this ALLOW goes unsigned.

With ``--http``, it measures the same over the wire instead: three real ``agbom serve``
processes on 127.0.0.1 (no key, Ed25519, ML-DSA-65 with ``acs-crypto``), one keep-alive
client sending toolCallRequests one at a time, in turns as above; the figure is the ratio of
median round-trip times (HTTP parsing, the hop to the decision process and back included).

They take turns in rounds, the order reversed every other round; the figure is each one's
median per round over the anchor's in the same round, then the median of those ratios, with
thread CPU time beside wall time (other engineers' jobs share the 2 cores). It also prints the
bare cost of one signature over a typical answer's §10 input, and the answer's size.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_guardian  # noqa: E402
import orjson  # noqa: E402

from agbom.evidence import SigningKey, write_key_pair  # noqa: E402
from agbom.guardian import GuardianConfig, build_guardian  # noqa: E402
from agbom.protocol.signatures import sign_envelope, signing_input  # noqa: E402

SECRET = b"bench-signing-secret-0123456789abcdef"


def _session_key(session_id: str) -> bytes:
    # HKDF-SHA256, no salt, info = session_id (ACS §10), as a client computes it.
    prk = hmac.new(bytes(32), SECRET, hashlib.sha256).digest()
    return hmac.new(prk, session_id.encode() + b"\x01", hashlib.sha256).digest()


class Case:
    def __init__(self, name: str, folder: Path, **options: Any) -> None:
        self.name = name
        self.hmac = options.pop("hmac", False)
        self.session = f"bench-{name}"
        self.guardian = build_guardian(folder / f"{name}.db", **options)
        self.key = _session_key(self.session) if self.hmac else None
        hello = dict(bench_guardian.HELLO)
        hello["profiles_supported"] = ["acs-core", "acs-crypto"]
        for method, payload in (("handshake/hello", hello), ("steps/sessionStart", {})):
            answer = self.guardian.handle(self._signed(self._envelope(method, payload)))
            assert "error" not in answer, answer
        self.sizes: list[int] = []
        config = options.get("config", GuardianConfig())
        self.algorithm = name if config.signing_keys and config.sign_responses == "all" else None
        self.algorithm = self.algorithm or ("HMAC-SHA256" if self.hmac else None)

    def _envelope(self, method: str, payload: Any) -> dict[str, Any]:
        return bench_guardian.envelope(method, payload, session_id=self.session)

    def _signed(self, envelope: dict[str, Any]) -> dict[str, Any]:
        return sign_envelope(envelope, self.key, "default") if self.key is not None else envelope

    def bodies(self, count: int) -> list[bytes]:
        # Built (and HMAC-signed) up front: the client's work is not the Guardian's cost.
        return [
            orjson.dumps(
                self._signed(self._envelope("steps/toolCallRequest", bench_guardian.TOOL_PAYLOAD))
            )
            for _ in range(count)
        ]

    def decide(self, body: bytes) -> None:
        answer = self.guardian.handle(orjson.loads(body))
        if "error" in answer:
            raise SystemExit(f"{self.name}: unexpected error {answer['error']}")
        signature = answer["result"].get("signature") or {}
        if signature.get("algorithm") != self.algorithm:
            raise SystemExit(f"{self.name}: answered with {signature.get('algorithm')}")
        self.sizes.append(len(orjson.dumps(answer)))


def _timed(step: Callable[[bytes], None], items: list[bytes]) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for item in items:
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        step(item)
        wall.append((time.perf_counter_ns() - t0) / 1000)
        cpu.append((time.thread_time_ns() - c0) / 1000)
    return wall, cpu


def _bare_signing(answer: dict[str, Any], keys: dict[str, SigningKey], n: int) -> None:
    data = signing_input(answer)
    print(f"\nbare signature over one answer's §10 input ({len(data)} bytes), {n} each:")
    for name, key in keys.items():
        c0, t0 = time.thread_time(), time.perf_counter()
        for _ in range(n):
            signature = key.sign(data)
        wall = (time.perf_counter() - t0) / n * 1e6
        cpu = (time.thread_time() - c0) / n * 1e6
        print(f"  {name:10} {wall:8.1f} µs wall {cpu:8.1f} µs cpu   signature {len(signature)} B")


def bench_http(requests: int, rounds: int) -> None:
    import subprocess

    import httpx

    per_round = max(1, requests // rounds)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for algorithm in ("Ed25519", "ML-DSA-65"):
            write_key_pair(SigningKey.generate(algorithm), folder / algorithm)
        servers: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
        try:
            for name, extra in (
                ("anchor", []),
                ("Ed25519", ["--signing-key", str(folder / "Ed25519.key")]),
                ("ML-DSA-65", ["--signing-key", str(folder / "ML-DSA-65.key")]),
            ):
                port = bench_guardian.free_port()
                command = [sys.executable, "-m", "agbom", "serve", "--port", str(port)]
                command += ["--db", str(folder / f"{name}.db"), *extra]
                proc = subprocess.Popen(command, stderr=subprocess.DEVNULL)
                servers[name] = (proc, port)
            clients = {}
            for name, (proc, port) in servers.items():
                bench_guardian.wait_healthy(port, proc, timeout=60)
                client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
                session = f"http-{name}"
                hello = dict(bench_guardian.HELLO, profiles_supported=["acs-core", "acs-crypto"])
                for method, payload in (("handshake/hello", hello), ("steps/sessionStart", {})):
                    request = bench_guardian.envelope(method, payload, session_id=session)
                    body = orjson.dumps(request)
                    reply = client.post(
                        "/acs", content=body, headers={"content-type": "application/json"}
                    ).json()
                    if "error" in reply:
                        raise SystemExit(f"{name}: {method}: {reply['error']}")
                clients[name] = (client, session)

            def one(name: str) -> float:
                client, session = clients[name]
                body = orjson.dumps(
                    bench_guardian.envelope(
                        "steps/toolCallRequest", bench_guardian.TOOL_PAYLOAD, session_id=session
                    )
                )
                t0 = time.perf_counter_ns()
                answer = client.post(
                    "/acs", content=body, headers={"content-type": "application/json"}
                ).json()
                elapsed = (time.perf_counter_ns() - t0) / 1000
                if "error" in answer:
                    raise SystemExit(f"{name}: {answer['error']}")
                return elapsed

            for name in clients:  # warm-up
                for _ in range(100):
                    one(name)
            ratios: dict[str, list[float]] = {n: [] for n in clients}
            names = list(clients)
            for index in range(rounds):
                medians = {}
                for name in names if index % 2 == 0 else names[::-1]:
                    medians[name] = statistics.median(one(name) for _ in range(per_round))
                for name, value in medians.items():
                    ratios[name].append(value / medians["anchor"])
                shown = ", ".join(f"{n} {v:.0f} µs" for n, v in medians.items())
                print(f"round {index + 1}: {shown}")
            print("\nmedian ratio of round-trip medians to the anchor (HTTP, one client):")
            for name in names:
                print(f"  {name:10} {statistics.median(ratios[name]):.2f}x")
        finally:
            for proc, _ in servers.values():
                bench_guardian.stop(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=6000, help="per Guardian, all rounds")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--http", action="store_true", help="over HTTP to real agbom serve")
    args = parser.parse_args()
    if args.http:
        bench_http(min(args.requests, 3000), args.rounds)
        return
    per_round = max(1, args.requests // args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        secret = folder / "secret"
        secret.write_bytes(SECRET)
        secret.chmod(0o600)
        keys = {}
        for algorithm in ("Ed25519", "ML-DSA-65"):
            keys[algorithm] = SigningKey.generate(algorithm)
            write_key_pair(keys[algorithm], folder / algorithm)

        def signed_by(algorithm: str, scope: str = "all") -> GuardianConfig:
            return GuardianConfig(
                signing_keys=(str(folder / f"{algorithm}.key"),), sign_responses=scope
            )

        cases = [
            Case("anchor", folder),
            Case("HMAC-SHA256", folder, secret_file=secret, hmac=True),
            Case("Ed25519", folder, config=signed_by("Ed25519")),
            Case("ML-DSA-65", folder, config=signed_by("ML-DSA-65")),
            # --sign-responses non-allow: the ALLOW measured here is answered unsigned.
            Case("non-allow", folder, config=signed_by("ML-DSA-65", "non-allow")),
        ]
        for case in cases:  # warm-up
            for body in case.bodies(300):
                case.decide(body)
        ratios: dict[str, list[float]] = {c.name: [] for c in cases}
        cpu_ratios: dict[str, list[float]] = {c.name: [] for c in cases}
        walls: dict[str, list[float]] = {c.name: [] for c in cases}
        for index in range(args.rounds):
            order = cases if index % 2 == 0 else cases[::-1]
            medians: dict[str, tuple[float, float]] = {}
            for case in order:
                wall, cpu = _timed(case.decide, case.bodies(per_round))
                walls[case.name] += wall
                medians[case.name] = (statistics.median(wall), statistics.median(cpu))
            anchor_wall, anchor_cpu = medians["anchor"]
            for name, (wall_m, cpu_m) in medians.items():
                ratios[name].append(wall_m / anchor_wall)
                cpu_ratios[name].append(cpu_m / anchor_cpu)
            print(
                f"round {index + 1}: "
                + ", ".join(f"{n} {w:.0f} µs" for n, (w, _) in medians.items())
            )
        print(f"\n{'':12} {'median':>10} {'p99':>10} {'ratio (wall)':>13} {'ratio (cpu)':>12}"
              f" {'answer bytes':>13}")  # fmt: skip
        for case in cases:
            times = sorted(walls[case.name])
            print(
                f"{case.name:12} {statistics.median(times):8.0f} µs "
                f"{times[int(0.99 * (len(times) - 1))]:8.0f} µs "
                f"{statistics.median(ratios[case.name]):12.2f}x "
                f"{statistics.median(cpu_ratios[case.name]):11.2f}x "
                f"{statistics.median(case.sizes):13.0f}"
            )
        sample = cases[0].guardian.handle(orjson.loads(cases[0].bodies(1)[0]))  # an unsigned answer
        _bare_signing(sample, keys, 500)
        for case in cases:
            case.guardian.store.close()


if __name__ == "__main__":
    main()
