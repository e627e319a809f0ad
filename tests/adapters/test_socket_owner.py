"""The server's word on who is asking (agbom/adapters/socket_owner.py): the kernel's owner of
the client's socket, by netlink and by /proc/net/tcp alike, on real loopback connections."""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agbom.adapters import socket_owner

pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="Linux only")


@contextmanager
def _connection(
    family: int = socket.AF_INET, host: str = "127.0.0.1"
) -> Iterator[tuple[tuple[str, int], tuple[str, int]]]:
    """A connection to a loopback listener: (client, server) as the server's socket says."""
    with socket.socket(family) as listener:
        listener.bind(("::" if family == socket.AF_INET6 else host, 0))
        listener.listen()
        with socket.create_connection((host, listener.getsockname()[1])):
            accepted, peer = listener.accept()
            with accepted:
                yield peer[:2], accepted.getsockname()[:2]


def _both(client: tuple[str, int], server: tuple[str, int]) -> tuple[int | None, int | None]:
    kernel = next(
        (uid for f in socket_owner._forms(client, server) if (uid := socket_owner._ask_kernel(*f))
         is not None),
        None,
    )  # fmt: skip
    return kernel, socket_owner._from_proc(client, server)


def test_the_owner_of_a_connection_is_told_by_netlink_and_by_proc_alike() -> None:
    with _connection() as (client, server):
        assert _both(client, server) == (os.getuid(), os.getuid())
        assert socket_owner.peer_uid(client, server) == os.getuid()
    # An IPv6 listener taking IPv4 clients reports them as ::ffff:127.0.0.1.
    with _connection(socket.AF_INET6, "127.0.0.1") as (client, server):
        assert client[0] == "::ffff:127.0.0.1"
        assert _both(client, server) == (os.getuid(), os.getuid())
    with _connection(socket.AF_INET6, "::1") as (client, server):
        assert _both(client, server) == (os.getuid(), os.getuid())
        assert socket_owner.peer_uid(client, server) == os.getuid()


def test_no_such_connection_has_no_owner() -> None:
    with _connection() as (client, server):
        stranger = (client[0], client[1] + 1 if client[1] < 65535 else client[1] - 1)
        assert _both(stranger, server) == (None, None)
        assert socket_owner.peer_uid(stranger, server) is None
    assert socket_owner.peer_uid(("not an address", 1), ("127.0.0.1", 2)) is None
    assert socket_owner.peer_uid(("127.0.0.1", 1), ("::1", 2)) is None


def test_a_closed_connection_is_nobodys_not_roots() -> None:
    # The client closes first: its end waits in TIME_WAIT, which the kernel lists as uid 0.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        client = socket.create_connection(listener.getsockname())
        accepted, peer = listener.accept()
        server = accepted.getsockname()
        client.close()
        time.sleep(0.05)
        accepted.close()
        time.sleep(0.05)
        assert _both(peer, server) == (None, None)
        assert socket_owner.peer_uid(peer, server) is None


def test_without_netlink_the_proc_table_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object) -> int | None:
        raise PermissionError("netlink refused")

    monkeypatch.setattr(socket_owner, "_ask_kernel", refused)
    with _connection() as (client, server):
        assert socket_owner.peer_uid(client, server) == os.getuid()


_HOLD = """
import socket, sys
conn = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print(conn.getsockname()[1], flush=True)
sys.stdin.read()
"""


def test_another_users_connection_is_theirs() -> None:
    if os.getuid() != 0 or not Path("/usr/bin/python3").exists():
        pytest.skip("needs root (to run a client as another user) and /usr/bin/python3")
    nobody = pwd.getpwnam("nobody")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        holder = subprocess.Popen(
            ["/usr/bin/python3", "-I", "-c", _HOLD, str(port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            user=nobody.pw_uid,
            group=nobody.pw_gid,
            cwd="/",
        )
        try:
            accepted, peer = listener.accept()
            with accepted:
                assert holder.stdout is not None
                assert int(holder.stdout.readline()) == peer[1]
                assert _both(peer, accepted.getsockname()) == (nobody.pw_uid, nobody.pw_uid)
                assert socket_owner.peer_uid(peer, accepted.getsockname()) == nobody.pw_uid
        finally:
            holder.communicate(b"", timeout=10)
    assert sys.platform.startswith("linux")
