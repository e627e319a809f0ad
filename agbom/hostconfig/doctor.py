"""``agbom hook doctor``: for each host found on this machine, what agbom has installed, which
events it gates, and which paths stay open (for the host's version, where that matters).

A host is "found" when its program is on PATH or its user configuration folder exists. Each
scope's file is read (never written), agbom's entries in it listed, and checked: the program
the hook runs exists, the server it names answers ``/healthz``, a managed Copilot policy file
is owned by root and writable by nobody else. What a host leaves open comes from the table
(:mod:`agbom.hostconfig.specs`), with the events agbom's entries do not cover and what the
host's version changes.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agbom.hostconfig import install
from agbom.hostconfig.interface import HostConfigError
from agbom.hostconfig.specs import HOSTS, SCOPES, Host, Places

VERSION_SECONDS = 3.0
HEALTH_SECONDS = 1.0
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


@dataclass
class Installed:
    scope: str
    path: str
    events: dict[str, list[str]]
    problems: list[str] = field(default_factory=list)


@dataclass
class Report:
    host: str
    title: str
    found_by: list[str]
    version: str | None
    installed: list[Installed]
    gated: list[str]
    not_gated: list[str]
    open_paths: list[str]
    fails_open: list[str]

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["installed"] = [dict(i.__dict__) for i in self.installed]
        return out


def version_of(program: str) -> str | None:
    """``X.Y.Z`` from ``PROGRAM --version`` (bounded in time), or None."""
    try:
        done = subprocess.run(
            [program, "--version"],
            capture_output=True,
            timeout=VERSION_SECONDS,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(done.stdout[:4096].decode("utf-8", "replace"))
    return ".".join(match.groups()) if match else None


def _older(version: str | None, than: tuple[int, int, int]) -> bool:
    if version is None:
        return False
    return tuple(int(x) for x in version.split(".")) < than


def version_notes(host: str, version: str | None) -> list[str]:
    """What this version of ``host`` leaves open beyond the table's list."""
    notes = []
    if host == "codex" and _older(version, (0, 124, 0)):
        notes.append(
            f"Codex {version}: hooks are off unless [features] hooks = true, and do not run for "
            "apply_patch and MCP tools (0.124.0 and later do)"
        )
    if host == "claude-code" and _older(version, (2, 1, 295)):
        notes.append(
            f"Claude Code {version}: onFailure is not known before 2.1.295, so a hook that "
            "crashes, hangs or is missing lets the action through"
        )
    if version is None and host in ("codex", "claude-code"):
        notes.append("version unknown: the version-specific gaps could not be checked")
    return notes


def _server_of(command: str) -> str | None:
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    for i, arg in enumerate(argv):
        if arg == "--server" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--server="):
            return arg.split("=", 1)[1]
    if command.startswith(("http://", "https://")):
        return command.split("/hooks/")[0]
    return None


def server_answers(url: str) -> bool:
    """Whether ``URL/healthz`` answers 200 (one bounded request)."""
    import urllib.error
    import urllib.request

    if not url.startswith(("http://", "https://")):
        return False
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/healthz", timeout=HEALTH_SECONDS) as r:
            return int(r.status) == 200
    except (OSError, ValueError, urllib.error.URLError):
        return False


def _problems(host: Host, scope: str, path: Path, events: dict[str, list[str]]) -> list[str]:
    problems: list[str] = []
    commands = {c for cs in events.values() for c in cs}
    for command in sorted(commands):
        if command.startswith(("http://", "https://")):
            continue
        try:
            program = shlex.split(command)[0]
        except (ValueError, IndexError):
            problems.append(f"cannot read the command {command[:80]!r}")
            continue
        if os.path.isabs(program) and not os.access(program, os.X_OK):
            problems.append(f"the hook runs {program}, which is missing or not executable")
        elif not os.path.isabs(program) and shutil.which(program) is None:
            problems.append(f"the hook runs {program}, which is not on PATH")
    for server in sorted({s for c in commands if (s := _server_of(c))}):
        if not server_answers(server):
            problems.append(f"the server {server} does not answer /healthz")
    if host.name == "copilot" and scope == "managed":
        info = path.stat()
        if info.st_uid != 0 or info.st_mode & 0o022:
            problems.append(
                "Copilot ignores a policy file not owned by root or writable by group or others"
            )
    note = host.scope_notes.get(scope)
    if note:
        problems.append(note)
    return problems


def diagnose(
    places: Places,
    *,
    which: Callable[[str], str | None] = shutil.which,
    versions: bool = True,
) -> list[Report]:
    """A report for every host found (by program or configuration folder)."""
    reports = []
    for host in HOSTS.values():
        found_by = [p for b in host.binaries if (p := which(b))]
        found_by += [str(d) for d in host.config_dirs(places) if d.is_dir()]
        installed: list[Installed] = []
        for scope in SCOPES:
            path = host.paths(scope, places)
            if path is None:
                continue
            try:
                text = install.read_config(path)
                events = install.installed_events(host, text) if text is not None else {}
            except HostConfigError as exc:
                installed.append(Installed(scope, str(path), {}, [exc.diagnostics()]))
                continue
            if events:
                problems = _problems(host, scope, path, events)
                installed.append(Installed(scope, str(path), events, problems))
        if not found_by and not installed:
            continue
        binary = next((b for b in host.binaries if which(b)), None)
        version = version_of(binary) if versions and binary else None
        covered = {e for i in installed for e in i.events}
        gated = [f"{e.name}: {e.gates}" for e in host.events if e.name in covered]
        not_gated = [e.name for e in host.events if e.name not in covered]
        open_paths = list(host.open_paths) + version_notes(host.name, version)
        if not installed:
            open_paths.insert(0, "agbom is not installed: nothing is gated")
        else:
            open_paths += [
                f"{e.name} ({e.gates}): no agbom entry" for e in host.events if e.name in not_gated
            ]
        reports.append(
            Report(
                host=host.name,
                title=host.title,
                found_by=found_by,
                version=version,
                installed=installed,
                gated=gated,
                not_gated=not_gated,
                open_paths=open_paths,
                fails_open=list(host.fails_open),
            )
        )
    return reports


def render(reports: list[Report]) -> str:
    """The reports as text for a person."""
    if not reports:
        return "No agent host found on this machine (by program on PATH or its config folder).\n"
    out: list[str] = []
    for r in reports:
        version = f" {r.version}" if r.version else ""
        out.append(f"{r.title}{version} ({r.host}; found: {', '.join(r.found_by) or 'config'})")
        if not r.installed:
            out.append("  installed: nothing (agbom hook install " + r.host + ")")
        for i in r.installed:
            out.append(f"  installed ({i.scope}): {i.path}")
            out.append(f"    events: {', '.join(sorted(i.events))}")
            out.extend(f"    ! {p}" for p in i.problems)
        out.extend(f"  gated: {g}" for g in r.gated)
        out.extend(f"  open: {p}" for p in r.open_paths)
        out.extend(f"  host fails open: {f}" for f in r.fails_open)
        out.append("")
    return "\n".join(out)
