"""``agbom hook install|uninstall HOST``: agbom's hook entries written into, and removed from,
a host's own configuration.

A change is planned first (:func:`plan_install`, :func:`plan_uninstall`: the file's text
before and after), so that ``--dry-run`` prints exactly what :func:`apply` would write. The
user's file is edited, never rewritten: JSON and JSONC one span at a time
(:mod:`agbom.hostconfig.jsonc_edit`, comments and unknown keys kept), TOML with tomlkit.
Another tool's hooks are left alone; agbom's own entries are found by their command (it runs
``agbom hook HOST`` or ``agbom-hook HOST``), or their URL (``.../hooks/HOST``) for an HTTP
hook, so that a second install changes nothing, an install with other options replaces
agbom's entries, and an uninstall removes them and nothing else. :func:`apply` keeps a copy of
the file as it was (``FILE.agbom-backup-TIMESTAMP``) and replaces it in one rename.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from agbom.hostconfig import jsonc_edit
from agbom.hostconfig.interface import HostConfigError
from agbom.hostconfig.specs import Host, Places

MAX_CONFIG_BYTES = 4 * 1024 * 1024
PLUGIN_MARKER = "agbom-managed"
_PLUGIN_COMMAND_LINE = "// agbom-install: command"
_PLUGIN_TIMEOUT_LINE = "// agbom-install: timeout"


@dataclass(frozen=True, slots=True)
class Change:
    """One file's text before (None: absent) and after (None: to be removed)."""

    host: str
    scope: str
    path: Path
    before: str | None
    after: str | None
    events: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the change (empty when nothing changes)."""
        if not self.changed:
            return ""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=str(self.path) if self.before is not None else "/dev/null",
            tofile=str(self.path) if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


# -- agbom's entries -----------------------------------------------------------------------------

HOOK_LAUNCHER = "agbom-hook"
"""The script installed beside ``agbom`` that runs ``agbom hook`` without the import of
:mod:`re` the entry point's generated script makes first (bin/agbom-hook): what a hook runs
where it is installed."""


def hook_command(
    host: str,
    *,
    agbom: Sequence[str],
    server: str | None,
    timeout: float | None = None,
    token_file: str | None = None,
    fail_open: bool = False,
) -> list[str]:
    """The argv of agbom's hook for ``host``: ``AGBOM hook HOST ...``, or ``agbom-hook HOST
    ...`` when ``agbom`` is the hook launcher (:data:`HOOK_LAUNCHER`)."""
    launcher = len(agbom) == 1 and os.path.basename(agbom[0]) == HOOK_LAUNCHER
    argv = [*agbom, host] if launcher else [*agbom, "hook", host]
    if server:
        argv += ["--server", server]
        if timeout is not None:
            argv += ["--timeout", f"{timeout:g}"]
        if token_file:
            argv += ["--token-file", token_file]
    if fail_open:
        argv.append("--fail-open")
    return argv


def is_agbom_command(text: Any, host: str) -> bool:
    """Whether ``text`` runs agbom's hook for ``host`` (``.../agbom hook HOST ...``,
    ``python -m agbom hook HOST ...`` or ``.../agbom-hook HOST ...``), or is the URL of its
    HTTP endpoint."""
    if not isinstance(text, str):
        return False
    if text.startswith(("http://", "https://")):
        return text.split("?")[0].rstrip("/").endswith(f"/hooks/{host}")
    try:
        argv = shlex.split(text)
    except ValueError:
        return False
    for i in range(len(argv) - 1):
        if os.path.basename(argv[i]) == HOOK_LAUNCHER and argv[i + 1] == host:
            return True
        if argv[i] == "hook" and argv[i + 1] == host:
            before = argv[:i]
            if any(os.path.basename(a) == "agbom" for a in before):
                return True
            return any(a == "-m" and b == "agbom" for a, b in zip(before, before[1:], strict=False))
    return False


def _handler_command(handler: Any) -> Any:
    if not isinstance(handler, dict):
        return None
    for key in ("command", "bash", "url"):
        if key in handler:
            return handler[key]
    return None


def _ours(entry: Any, host: Host) -> tuple[bool, list[int]]:
    """``(whole entry is agbom's, indexes of agbom's handlers inside a group)``."""
    if host.format == "json-flat":
        return is_agbom_command(_handler_command(entry), host.name), []
    handlers = entry.get("hooks") if isinstance(entry, dict) else None
    if not isinstance(handlers, list):
        return False, []
    mine = [i for i, h in enumerate(handlers) if is_agbom_command(_handler_command(h), host.name)]
    return bool(handlers) and len(mine) == len(handlers), mine


# -- planning ------------------------------------------------------------------------------------


def read_config(path: Path) -> str | None:
    """The file's text, or None when there is none; bounded, UTF-8, never a link elsewhere."""
    try:
        if path.is_symlink():
            raise HostConfigError(f"{path} is a symbolic link; agbom edits only regular files")
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise HostConfigError(f"{path} is a folder, not a file") from None
    except OSError as exc:
        raise HostConfigError(f"{path}: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise HostConfigError(f"{path} is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise HostConfigError(f"{path} is not UTF-8 text") from None


def plan_install(
    host: Host,
    scope: str,
    places: Places,
    command: Sequence[str],
    *,
    http_url: str | None = None,
    plugin_timeout_ms: int = 10_000,
) -> Change:
    """The change that puts agbom's hook for every event of ``host`` in ``scope``'s file."""
    path = host.path(scope, places)
    before = read_config(path)
    events = tuple(e.name for e in host.events)
    if host.format == "plugin":
        after = plugin_text(command, plugin_timeout_ms)
        if before is not None and before != after and PLUGIN_MARKER not in before[:400]:
            raise HostConfigError(f"{path} exists and was not written by agbom; not replaced")
        return Change(host.name, scope, path, before, after, events)
    line = http_url or shlex.join(command)
    wanted = {e.name: host.entry(e, line) for e in host.events}
    editor = _TomlEdit(before) if host.format == "toml-groups" else _JsonEdit(before, host)
    editor.set_entries(host, wanted)
    return Change(host.name, scope, path, before, editor.text(), events)


def plan_uninstall(host: Host, scope: str, places: Places) -> Change:
    """The change that removes agbom's entries (and a file that held only them)."""
    path = host.path(scope, places)
    before = read_config(path)
    if before is None:
        return Change(host.name, scope, path, None, None)
    if host.format == "plugin":
        after = None if PLUGIN_MARKER in before[:400] else before
        return Change(host.name, scope, path, before, after)
    editor = _TomlEdit(before) if host.format == "toml-groups" else _JsonEdit(before, host)
    editor.set_entries(host, {})
    return Change(host.name, scope, path, before, editor.text(empty_means_remove=True))


def installed_events(host: Host, text: str) -> dict[str, list[str]]:
    """``{event: [agbom's commands]}`` in a config's text (for doctor)."""
    if host.format == "plugin":
        if PLUGIN_MARKER not in text[:400]:
            return {}
        return {e.name: [_plugin_command(text)] for e in host.events}
    data = _TomlEdit(text).data() if host.format == "toml-groups" else jsonc_edit.load(text)
    hooks = data.get("hooks") if isinstance(data, dict) else None
    found: dict[str, list[str]] = {}
    if not isinstance(hooks, dict):
        return found
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            continue
        for entry in entries:
            handlers = entry.get("hooks", []) if host.format != "json-flat" else [entry]
            for handler in handlers if isinstance(handlers, list) else []:
                command = _handler_command(handler)
                if is_agbom_command(command, host.name):
                    found.setdefault(str(event), []).append(str(command))
    return found


# -- editing -------------------------------------------------------------------------------------


class _JsonEdit:
    def __init__(self, text: str | None, host: Host) -> None:
        self.created = text is None
        self.host = host
        self.source = text
        if text is None:
            text = json.dumps({**host.skeleton, "hooks": {}}, indent=2) + "\n"
        self.value = jsonc_edit.load(text)
        if not isinstance(self.value, dict):
            raise HostConfigError("the configuration is not a JSON object")
        self.buffer = text
        if "hooks" not in self.value:
            self.buffer = jsonc_edit.add_member(self.buffer, (), "hooks", {})
        elif not isinstance(self.value["hooks"], dict):
            raise HostConfigError("its 'hooks' is not an object")

    def data(self) -> Any:
        return jsonc_edit.load(self.buffer)

    def set_entries(self, host: Host, wanted: dict[str, dict[str, Any]]) -> None:
        hooks = self.data()["hooks"]
        for event in list(hooks):
            entries = hooks[event]
            if not isinstance(entries, list):
                continue
            mine = [(i, _ours(e, host)) for i, e in enumerate(entries)]
            whole = [i for i, (all_ours, _) in mine if all_ours]
            partial = [(i, hs) for i, (all_ours, hs) in mine if not all_ours and hs]
            if event in wanted and len(whole) == 1 and not partial:
                if entries[whole[0]] == wanted[event]:
                    del wanted[event]  # already there, as wanted
                    continue
            for i, handler_indexes in reversed(partial):
                for j in reversed(handler_indexes):
                    self.buffer = jsonc_edit.remove(self.buffer, ("hooks", event, i, "hooks", j))
            for i in reversed(whole):
                self.buffer = jsonc_edit.remove(self.buffer, ("hooks", event, i))
            if (whole or partial) and event not in wanted and len(entries) == len(whole):
                self.buffer = jsonc_edit.remove(self.buffer, ("hooks", event))
        current = self.data()["hooks"]
        for event, entry in wanted.items():
            if isinstance(current.get(event), list):
                self.buffer = jsonc_edit.append(self.buffer, ("hooks", event), entry)
            elif event in current:
                raise HostConfigError(f"its 'hooks.{event}' is not a list")
            else:
                self.buffer = jsonc_edit.add_member(self.buffer, ("hooks",), event, [entry])
        for key, value in self.host.skeleton.items():
            if key not in self.data():
                self.buffer = jsonc_edit.add_member(self.buffer, (), key, value)

    def text(self, *, empty_means_remove: bool = False) -> str | None:
        data = self.data()
        if not data["hooks"]:
            if self.created:
                return None
            if empty_means_remove:
                self.buffer = jsonc_edit.remove(self.buffer, ("hooks",))
                rest = self.data()
                if not rest or rest == dict(self.host.skeleton):
                    return None  # it held agbom's hooks only: it goes, as it came
        return self.buffer


class _TomlEdit:
    def __init__(self, text: str | None) -> None:
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        self.created = text is None
        try:
            self.doc = tomlkit.parse(text or "")
        except TOMLKitError as exc:
            raise HostConfigError(f"not valid TOML: {exc}") from None

    def data(self) -> Any:
        return self.doc.unwrap()

    def set_entries(self, host: Host, wanted: dict[str, dict[str, Any]]) -> None:
        import tomlkit

        hooks = self.doc.get("hooks")
        if hooks is None:
            if not wanted:
                return
            hooks = tomlkit.table(is_super_table=True)
            self.doc["hooks"] = hooks
        if not isinstance(hooks, dict):
            raise HostConfigError("its 'hooks' is not a table")
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue  # managed_dir and other keys of the hooks table
            plain = [g.unwrap() if hasattr(g, "unwrap") else g for g in groups]
            mine = [(i, _ours(g, host)) for i, g in enumerate(plain)]
            whole = [i for i, (all_ours, _) in mine if all_ours]
            partial = [(i, hs) for i, (all_ours, hs) in mine if not all_ours and hs]
            if event in wanted and len(whole) == 1 and not partial:
                if plain[whole[0]] == wanted[event]:
                    del wanted[event]
                    continue
            for i, handler_indexes in reversed(partial):
                for j in reversed(handler_indexes):
                    del groups[i]["hooks"][j]
            for i in reversed(whole):
                del groups[i]
            if (whole or partial) and event not in wanted and len(plain) == len(whole):
                del hooks[event]
        for event, entry in wanted.items():
            group = tomlkit.table()
            for key, value in entry.items():
                if key == "hooks":
                    handlers = tomlkit.aot()
                    for handler in value:
                        item = tomlkit.table()
                        item.update(handler)
                        handlers.append(item)
                    group["hooks"] = handlers
                else:
                    group[key] = value
            if event in hooks:
                hooks[event].append(group)
            else:
                groups = tomlkit.aot()
                groups.append(group)
                hooks[event] = groups

    def text(self, *, empty_means_remove: bool = False) -> str | None:
        import tomlkit

        hooks = self.doc.get("hooks")
        if isinstance(hooks, dict) and not hooks and empty_means_remove:
            del self.doc["hooks"]
        out = tomlkit.dumps(self.doc)
        if not out.strip() and (self.created or empty_means_remove):
            return None
        return out


# -- the opencode plugin -------------------------------------------------------------------------


def plugin_source() -> str:
    """agbom's opencode plugin as shipped (agbom/hostconfig/opencode_plugin.ts)."""
    return resources.files("agbom.hostconfig").joinpath("opencode_plugin.ts").read_text("utf-8")


def plugin_text(command: Sequence[str], timeout_ms: int) -> str:
    """The plugin with the hook command (and its time limit) written in."""
    lines = []
    for line in plugin_source().splitlines(keepends=True):
        if line.rstrip().endswith(_PLUGIN_COMMAND_LINE):
            argv = json.dumps(list(command))
            line = f"const AGBOM_COMMAND: string[] = {argv} {_PLUGIN_COMMAND_LINE}\n"
        elif line.rstrip().endswith(_PLUGIN_TIMEOUT_LINE):
            line = f"const TIMEOUT_MS = {int(timeout_ms)} {_PLUGIN_TIMEOUT_LINE}\n"
        lines.append(line)
    return "".join(lines)


def _plugin_command(text: str) -> str:
    for line in text.splitlines():
        if line.rstrip().endswith(_PLUGIN_COMMAND_LINE):
            value = line.split("=", 1)[1].rsplit("//", 1)[0].strip()
            try:
                return shlex.join(json.loads(value))
            except (ValueError, TypeError):
                return value
    return ""


# -- writing -------------------------------------------------------------------------------------


def apply(change: Change) -> Path | None:
    """Write ``change``; returns the backup of the file as it was (None when there was none).

    The new text goes to a temporary file beside it, then replaces it in one rename, keeping
    the old file's mode; a file that held only agbom's entries is removed (after its backup).
    """
    if not change.changed:
        return None
    path = change.path
    backup = None
    try:
        if change.before is not None:
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            backup = path.with_name(f"{path.name}.agbom-backup-{stamp}")
            n = 1
            while backup.exists():
                n += 1
                backup = path.with_name(f"{path.name}.agbom-backup-{stamp}-{n}")
            mode = path.stat().st_mode & 0o777
            _write(backup, change.before.encode("utf-8"), mode)
        if change.after is None:
            path.unlink()
            return backup
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o777 if change.before is not None else 0o644
        _write(path, change.after.encode("utf-8"), mode)
    except OSError as exc:
        where = exc.filename or path
        raise HostConfigError(f"cannot write {where}: {exc.strerror or exc}") from None
    return backup


def _write(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
