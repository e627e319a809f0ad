"""``serve --read-project-skills DIR``: the server reads a Claude Code skill from its own disk.

An HTTP hook (Claude Code's ``"type": "http"``) sends the event straight to the server; no hook
process reads the skill folder first, so the Guardian sees no digest and denies the load. An
operator whose server runs on the users' machine, under their account, may let the server read
``<cwd>/.claude/skills/NAME`` itself, for events whose ``cwd`` lies inside a folder it names.
Off by default: ``cwd`` is whatever the client sent, so without this a client can make the
server read any folder it can see, store its texts and show them on the review page.

The read never runs on the decision loop (or on the HTTP event loop): it runs in a pool of
:data:`WORKERS` threads of the front process, bounded like a hook's read
(:class:`agbom.adapters.skill_files.ReadLimits`) and by a deadline. An event that arrives
while every worker is busy, or whose read does not finish in time, gets a report saying so,
which the Guardian denies (fail closed). Events that already carry a report (thin mode) are
passed on untouched.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agbom.adapters import skill_files
from agbom.adapters.headers import MAX_EVENT_BYTES

WORKERS = 2
"""Skill folders read at once; a request that finds them all busy is denied at once."""
SECONDS = 2.0
"""How long one read may take before the event is answered without it."""


class ProjectSkills:
    """Reads the skill a Claude Code event names, for events whose cwd is under ``roots``."""

    def __init__(
        self, roots: Iterable[Path], *, workers: int = WORKERS, seconds: float = SECONDS
    ) -> None:
        self.roots = tuple(os.path.realpath(r) for r in roots)
        self.seconds = seconds
        self._workers = workers
        self._busy = 0
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="agbom-skills")

    def inside(self, cwd: str | None) -> str | None:
        """The real path of ``cwd`` when it is absolute and inside a root, else None."""
        if not cwd or not os.path.isabs(cwd) or "\x00" in cwd:
            return None
        real = os.path.realpath(cwd)
        for root in self.roots:
            if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
                return real
        return None

    async def attach(self, runtime: str, body: bytes) -> bytes:
        """``body`` with the skill report attached, when it is a Claude Code Skill call
        without one; otherwise ``body`` unchanged."""
        if runtime != "claude-code" or b'"Skill"' not in body:
            return body
        try:
            event = json.loads(body)
        except (ValueError, RecursionError):
            return body  # the adapter answers malformed input
        wanted = skill_files.skill_of(event)
        if wanted is None or skill_files.EVENT_KEY in event:
            return body
        name, cwd = wanted
        real = self.inside(cwd)
        if real is None:
            return self._report(event, name, "its cwd is not under a --read-project-skills folder")
        with self._lock:
            if self._busy >= self._workers:
                return self._report(event, name, "the server is reading other skill folders")
            self._busy += 1
        limits = skill_files.ReadLimits.within(self.seconds)
        future = self._pool.submit(self._read, name, real, limits)
        try:
            info = await asyncio.wait_for(asyncio.wrap_future(future), self.seconds + 0.5)
        except TimeoutError:
            return self._report(event, name, f"reading it took longer than {self.seconds:g} s")
        return skill_files.attached(event, info, MAX_EVENT_BYTES) or body

    def _read(self, name: str, cwd: str, limits: skill_files.ReadLimits) -> dict[str, Any]:
        try:
            if not skill_files.valid_name(name):
                return self._missing(name, "not a skill name")
            # .claude or .claude/skills may be links: where they lead must be allowed too.
            if self.inside(os.path.join(cwd, ".claude", "skills", name)) is None:
                return self._missing(name, "its folder resolves outside the allowed folders")
            return skill_files.local_skill(name, cwd=cwd, home=None, limits=limits)
        finally:
            with self._lock:
                self._busy -= 1

    @staticmethod
    def _missing(name: str, why: str) -> dict[str, Any]:
        return {
            "name": name,
            "found": False,
            "looked_in": [],
            "error": f"the server did not read skill {name}: {why}",
        }

    def _report(self, event: dict[str, Any], name: str, why: str) -> bytes:
        report = self._missing(name, why)
        return skill_files.attached(event, report, MAX_EVENT_BYTES) or json.dumps(event).encode()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
