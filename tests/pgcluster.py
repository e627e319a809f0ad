"""A throwaway PostgreSQL cluster for the tests: ``initdb`` in a temporary folder, one server
on a free loopback port, removed at the end.

Nothing here talks to a PostgreSQL the machine already runs. The binaries come from
``$AGBOM_PG_BINDIR``, ``pg_config --bindir``, ``/usr/lib/postgresql/*/bin`` or ``$PATH``. As
root the server runs as the unprivileged ``postgres`` user (PostgreSQL refuses to run as
root); otherwise as the current user. The superuser ``agbom`` logs in over TCP with a
password (SCRAM), so the tests go through real authentication; the unix socket sits in the
cluster's own folder, out of the way of any system PostgreSQL.

Durability is switched off (``fsync=off``): a crashed test cluster is thrown away anyway.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SUPERUSER = "agbom"
START_TIMEOUT_S = 120.0
"""How long a start may take on a loaded machine before the cluster is declared broken."""
STOP_TIMEOUT_S = 30.0


class ClusterUnavailable(RuntimeError):
    """No PostgreSQL binaries on this machine (the tests skip, or fail under CI=true)."""


def find_bindir() -> Path:
    """The folder holding ``initdb`` and ``postgres``; :class:`ClusterUnavailable` if none."""
    candidates: list[Path] = []
    if os.environ.get("AGBOM_PG_BINDIR"):
        candidates.append(Path(os.environ["AGBOM_PG_BINDIR"]))
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=30, check=True
            ).stdout.strip()
            candidates.append(Path(out))
    # Debian installs the server binaries off $PATH; newest major version first.
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates.extend(Path(p) for p in versions)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(os.path.realpath(initdb)).parent)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "postgres").is_file():
            return folder
    raise ClusterUnavailable(
        "PostgreSQL server binaries (initdb, postgres) not found: install Debian's postgresql "
        "package or set AGBOM_PG_BINDIR"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgCluster:
    """One initdb'd data folder and its running server."""

    def __init__(self, bindir: Path | None = None) -> None:
        self.bindir = bindir or find_bindir()
        self.root = Path(tempfile.mkdtemp(prefix="agbom-pg-"))
        self.data = self.root / "data"
        self.sockets = self.root / "sock"
        self.log = self.root / "postgres.log"
        self.password = secrets.token_urlsafe(18)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._counter = 0
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            try:
                entry = pwd.getpwnam("postgres")
            except KeyError:
                raise ClusterUnavailable(
                    "running as root, and there is no 'postgres' user to run the server as"
                ) from None
            self._uid, self._gid = entry.pw_uid, entry.pw_gid

    # -- lifecycle -------------------------------------------------------------------------

    def _command(self, *args: str) -> list[str]:
        if self._as_postgres:
            return ["runuser", "-u", "postgres", "--", *args]
        return list(args)

    def init(self) -> None:
        """``initdb`` the data folder: UTF-8, superuser ``agbom`` with a random password."""
        self.sockets.mkdir()
        pwfile = self.root / "pwfile"
        pwfile.write_text(self.password + "\n")
        pwfile.chmod(0o600)
        if self._as_postgres:
            for path in (self.root, self.sockets, pwfile):
                os.chown(path, self._uid, self._gid)
        result = subprocess.run(
            self._command(
                str(self.bindir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                SUPERUSER,
                f"--pwfile={pwfile}",
                "--auth-local=scram-sha-256",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ),
            capture_output=True,
            text=True,
            timeout=300,
        )
        pwfile.unlink()
        if result.returncode != 0:
            raise RuntimeError(f"initdb failed ({result.returncode}): {result.stderr.strip()}")

    def start(self, port: int | None = None) -> None:
        """Start the server on ``port`` (a free one when None) and wait (bounded) until it
        accepts logins."""
        for _attempt in range(5):
            self.port = free_port() if port is None else port
            log = open(self.log, "ab")  # the child keeps its own copy; ours is closed below
            if self._as_postgres:
                os.chown(self.log, self._uid, self._gid)
            try:
                self.process = subprocess.Popen(
                    self._command(
                        str(self.bindir / "postgres"),
                        "-D",
                        str(self.data),
                        "-p",
                        str(self.port),
                        "-k",
                        str(self.sockets),
                        "-c",
                        "listen_addresses=127.0.0.1",
                        "-c",
                        "fsync=off",
                        "-c",
                        "synchronous_commit=off",
                        "-c",
                        "full_page_writes=off",
                        "-c",
                        "max_connections=300",
                        "-c",
                        "shared_buffers=32MB",
                    ),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            finally:
                log.close()
            if self._wait_ready():
                return
            # Lost the port to someone else between free_port() and the bind: try another
            # (or, for a given port, the same one again once its old socket is gone).
            self._stop_process()
            if port is not None:
                time.sleep(1)
        raise RuntimeError(f"PostgreSQL did not start; log:\n{self.log_tail()}")

    def _wait_ready(self) -> bool:
        import psycopg

        deadline = time.monotonic() + START_TIMEOUT_S
        assert self.process is not None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with psycopg.connect(self.url("postgres"), connect_timeout=5):
                    return True
            except psycopg.OperationalError:
                time.sleep(0.1)
        return False

    def _stop_process(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        # SIGINT is PostgreSQL's "fast shutdown": disconnect clients, stop at once.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=STOP_TIMEOUT_S)

    def stop(self) -> None:
        """Stop the server (the data folder stays, :meth:`start` again works)."""
        self._stop_process()

    def destroy(self) -> None:
        """Stop the server and remove everything the cluster wrote."""
        self._stop_process()
        shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # -- databases -------------------------------------------------------------------------

    def url(self, database: str, *, password: str | None = None, user: str = SUPERUSER) -> str:
        """A ``postgresql://`` URL for ``database`` over TCP on 127.0.0.1."""
        secret = self.password if password is None else password
        return f"postgresql://{user}:{secret}@127.0.0.1:{self.port}/{database}"

    def execute(self, sql: str, *params: Any, database: str = "postgres") -> list[tuple[Any, ...]]:
        """Run one statement in autocommit as the superuser; return its rows (if any)."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True, connect_timeout=30) as conn:
            cur = conn.execute(sql, params or None)  # type: ignore[arg-type]
            return list(cur.fetchall()) if cur.description else []

    def create_database(self, prefix: str = "t") -> str:
        """A new empty database (from template0); returns its name."""
        self._counter += 1
        name = f"{prefix}_{os.getpid()}_{self._counter}"
        self.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return name

    def drop_database(self, name: str) -> None:
        """Drop ``name``, disconnecting whoever is still connected to it."""
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def running_cluster() -> Iterator[PgCluster]:
    """A started cluster, destroyed on exit."""
    cluster = PgCluster()
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()
