"""Standalone hook mode: ``agbom hook RUNTIME [--db PATH] [--rules DIR] ...``, decided in process.

A command hook starts one process per event. :func:`agbom.cli.main` hands a well-formed
standalone command line to :func:`main` here before typer, click and every other command's
module are imported (with typer's pydantic adapters, about a third of the process); anything
it does not recognise exactly (``--help``, an unknown or repeated option, a bad value,
``--no-default-rules`` without rules) goes through typer as before, so errors and help read
the same. Both ways end in :func:`run`, which opens the store and rules, decides the event
and answers it in the runtime's format.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from agbom.adapters.headers import MAX_EVENT_BYTES

# One byte more than the limit is read, so that an oversized event is seen as such (and denied).
MAX_STDIN_BYTES = MAX_EVENT_BYTES

_VALUED = {
    "--db": "db",
    "--rules": "rules",
    "--agent-id": "agent_id",
    "--hook-id": "hook_id",
    "--egress": "egress",
}
# Repeatable options (agbom/guardian/pack_selection.py), each a list of values.
_LISTS = {"--pack": "packs", "--egress-allow": "egress_allow", "--known-tool": "known_tools"}
_FLAGS = {
    "--fail-open": ("fail_open", True),
    "--fail-closed": ("fail_open", False),
    "--observe": ("observe", True),  # hidden alias of --mode observe (older hook configs)
    "--no-default-rules": ("no_default_rules", True),
}
# Options whose value typer takes from the environment when they are not given.
_ENVVARS = {"db": "AGBOM_DB", "rules": "AGBOM_RULES", "agent_id": "AGBOM_AGENT_ID"}


def parse(args: list[str], environ: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The options of ``agbom hook`` (``args`` after ``hook``), or None to leave it to typer.

    Only plain, valid command lines are taken; None for anything typer answers differently
    from a decision (help, usage errors), so that those keep typer's exact behaviour.
    """
    from agbom.adapters import ADAPTERS

    env = os.environ if environ is None else environ
    opts: dict[str, Any] = {
        "runtime": None,
        "db": None,
        "rules": None,
        "agent_id": None,
        "hook_id": None,
        "fail_open": False,
        "observe": False,
        "no_default_rules": False,
        "egress": None,
        "packs": [],
        "egress_allow": [],
        "known_tools": [],
    }
    seen: set[str] = set()
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        if name in _VALUED or name in ("--timeout", "--mode"):
            if name in seen:
                return None
            seen.add(name)
            if eq:
                value = inline
            elif i + 1 < len(args) and not args[i + 1].startswith("-"):
                i += 1
                value = args[i]
            else:  # no value, or one that looks like an option: typer's to read
                return None
            if name == "--timeout":  # thin mode's; typer checks it is a number, then ignores it
                try:
                    float(value)
                except ValueError:
                    return None
            elif name == "--mode":  # the spelling of serve and replay; --observe is its alias
                if value not in ("enforce", "observe") or "observe" in seen:
                    return None
                seen.add("observe")
                opts["observe"] = value == "observe"
            else:
                opts[_VALUED[name]] = value
        elif name in _LISTS:
            if eq:
                value = inline
            elif i + 1 < len(args) and not args[i + 1].startswith("-"):
                i += 1
                value = args[i]
            else:
                return None
            if not value:
                return None
            opts[_LISTS[name]].append(value)
        elif arg in _FLAGS:
            key, flag = _FLAGS[arg]
            if key in seen:
                return None
            seen.add(key)
            opts[key] = flag
        elif arg.startswith("-"):  # --help, --server, --, unknown options: typer's to answer
            return None
        elif opts["runtime"] is None and arg in ADAPTERS:
            opts["runtime"] = arg
        else:  # an unknown runtime or a second argument: typer's error message
            return None
        i += 1
    if opts["runtime"] is None:
        return None
    for key, var in _ENVVARS.items():
        if opts[key] is None and var in env:
            if not env[var]:
                return None  # how click reads an empty variable is its business
            opts[key] = env[var]
    for key in ("db", "rules"):
        if opts[key] is not None and not opts[key]:
            return None
    if opts["rules"] is not None:
        opts["rules"] = Path(opts["rules"])
    if opts["no_default_rules"] and opts["rules"] is None:
        return None  # typer's usage error: no rules at all
    from agbom.guardian.pack_selection import PackChoiceError, pack_settings

    try:
        opts["pack_settings"] = pack_settings(
            opts["packs"], opts["egress_allow"], opts["known_tools"], opts["egress"]
        )
    except PackChoiceError:
        return None  # typer's usage error, worded as serve's
    return opts


def main(args: list[str]) -> int | None:
    """Decide one event for ``agbom hook ARGS``; None when typer should handle ``args``."""
    opts = parse(args)
    if opts is None:
        return None
    return run(
        opts["runtime"],
        db=opts["db"],
        rules=opts["rules"],
        with_default_rules=not opts["no_default_rules"],
        fail_open=opts["fail_open"],
        observe=opts["observe"],
        agent_id=opts["agent_id"],
        hook_id=opts["hook_id"],
        packs=opts["pack_settings"],
    )


def run(
    runtime: str,
    *,
    db: str | None,
    rules: Path | None,
    with_default_rules: bool,
    fail_open: bool,
    observe: bool,
    agent_id: str | None,
    hook_id: str | None,
    packs: dict[str, Any] | None = None,
) -> int:
    """Decide the event on stdin in process, write the runtime's answer; the exit code.

    ``packs`` are the GuardianConfig fields of the pack options
    (:func:`agbom.guardian.pack_selection.pack_settings`); None: the default (the runtime
    baseline pack, as ``agbom serve`` starts with).

    Whatever goes wrong (unreadable store, bad rules, malformed event), the runtime gets an
    answer in its own format, per ``fail_open``; the reason goes to stderr.
    """
    from agbom.adapters import get_adapter

    adapter = get_adapter(runtime)
    raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    env = dict(os.environ)
    if agent_id:
        env["AGBOM_AGENT_ID"] = agent_id
    if hook_id:
        env["AGBOM_HOOK_ID"] = hook_id
    if len(raw) > MAX_STDIN_BYTES:
        # Denied before the store is even opened, in both failure modes (as in thin mode).
        from agbom.adapters.headers import TOO_LARGE_CODE, too_large_reason

        too_large = adapter.malformed(
            too_large_reason(), fail_open=False, code=TOO_LARGE_CODE, hook_id=hook_id or "agbom"
        )
        return answer(too_large)
    # Who is asking: this process's user and machine (agbom/adapters/headers.py), as thin
    # mode sends them to the server; here they are the OS's word, as nothing else asks.
    from agbom.adapters.identity import VERIFIED_ENV, local_identity

    env.update(local_identity())
    env[VERIFIED_ENV] = "local-process"
    if runtime == "claude-code":
        # What the event names is read here, bounded, as in thin mode: the skill a Skill call,
        # a typed /name or a ConfigChange names, the inventory at SessionStart; the adapter
        # decides on that report and reads no folder itself.
        from agbom.adapters import claude_inventory, skill_files

        raw = claude_inventory.enrich(
            raw,
            home=env.get("HOME"),
            environ=env,
            limits=skill_files.ReadLimits.within(skill_files.READ_SECONDS),
            limit=MAX_STDIN_BYTES,
        )
    else:
        from agbom.adapters import host_replies

        marker = host_replies.SKILL_MARKERS.get(runtime)
        if marker is not None and marker in raw:
            # Gemini CLI's activate_skill, opencode's skill tool: read here, the same way.
            from agbom.adapters import host_skills, skill_files

            raw = host_skills.with_local_skill(
                runtime,
                raw,
                home=env.get("HOME"),
                limits=skill_files.ReadLimits.within(skill_files.READ_SECONDS),
                limit=MAX_STDIN_BYTES,
            )
    guardian: Any = None
    try:
        from agbom.guardian import GuardianConfig, build_guardian
        from agbom.guardian.pack_selection import pack_settings

        # A path or a store URL (postgresql://...), as --db takes it; never echoed with secrets.
        store: str | Path = db if db is not None else default_hook_store()
        guardian = build_guardian(
            store,
            rules,
            mode="observe" if observe else "enforce",
            with_default_rules=with_default_rules,
            config=GuardianConfig(**(packs if packs is not None else pack_settings(()))),
        )
    except Exception as exc:  # noqa: BLE001 - the runtime must get an answer in its format
        from agbom.adapters import replies
        from agbom.errors import AgbomError
        from agbom.store.interface import UntrustedStoreError

        why = exc.diagnostics() if isinstance(exc, AgbomError) else f"{type(exc).__name__}: {exc}"
        reply = adapter.malformed(
            f"cannot start the Guardian: {why}",
            # A store another user could have written is a deny even in fail-open mode:
            # otherwise planting one would choose the answer.
            fail_open=fail_open and not isinstance(exc, UntrustedStoreError),
            event=replies.event_name(runtime, raw[:MAX_STDIN_BYTES]),
            code="agbom_error",
        )
    else:
        try:
            reply = adapter.handle(raw, guardian, env=env, fail_open=fail_open)
        finally:
            close = getattr(getattr(guardian, "store", None), "close", None)
            if callable(close):
                close()
    return answer(reply)


def default_hook_store() -> Path:
    """Where a standalone hook keeps its store without --db: the user's data folder, the
    same default as every other command (:mod:`agbom._store_location`, docs/store.md).

    A runtime runs hooks in the project folder; a store there would land in the repository.
    """
    from agbom._store_location import data_store

    path = data_store()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def answer(reply: Any) -> int:
    """Write ``reply`` (a :class:`~agbom.adapters.interface.HookReply`) the way the runtime
    reads it; its exit code."""
    from agbom.display import visible

    if reply.stderr:
        # Reasons quote what the agent sent (tool names, skill ids): no raw control bytes.
        sys.stderr.write(visible(reply.stderr.rstrip("\n")) + "\n")
        sys.stderr.flush()
    if reply.body:
        out = sys.stdout.buffer
        out.write(reply.body if reply.body.endswith(b"\n") else reply.body + b"\n")
        out.flush()
    return int(reply.exit_code)
