"""What ``agbom serve`` says about the address it binds: usage errors, one line when it cannot
bind, and the "serving" line only once it listens. Real subprocesses on 127.0.0.1."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.transports.served import agbom_command, free_port, run_cli

pytestmark = pytest.mark.network


def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli("serve", "--port", "99999", "--db", str(tmp_path / "s.db"))
    assert done.returncode == 2
    assert b"serving" not in done.stderr and b"--port" in done.stderr


def test_an_address_in_use_is_one_line_and_no_serving_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run_cli("serve", "--port", str(port), "--db", str(tmp_path / "s.db"), timeout=60)
    assert done.returncode == 1
    assert done.stderr.decode() == f"agbom: error: cannot bind 127.0.0.1:{port}: address in use\n"


def test_a_host_of_another_machine_cannot_be_bound(tmp_path: Path) -> None:
    # 192.0.2.0/24 is TEST-NET-1: never an address of this machine, and nothing is sent to it.
    done = run_cli(
        "serve",
        "--host",
        "192.0.2.1",
        "--public-read-api",
        "--port",
        str(free_port()),
        "--db",
        str(tmp_path / "s.db"),
    )
    assert done.returncode == 1
    assert b"cannot bind 192.0.2.1:" in done.stderr and b"serving" not in done.stderr


def test_port_zero_serves_on_the_port_it_announces(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [*agbom_command(), "serve", "--port", "0", "--db", str(tmp_path / "s.db")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        found = re.fullmatch(
            r"agbom: serving ACS on http://127\.0\.0\.1:(\d+)/acs \(store .*\)\n", line
        )
        assert found, line
        port = int(found.group(1))
        assert port != 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the decision process may still be starting
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        else:
            pytest.fail("the announced port never answered /healthz")
    finally:
        proc.terminate()
        proc.wait(15)
