"""Cursor command hooks (``.cursor/hooks.json``, ``~/.cursor/hooks.json``).

Event -> ACS step, as the ACS reference adapter maps them (``beforeReadFile`` added as a read):

=====================  ==========================================  ===============================
Cursor event           ACS step                                    a deny answers
=====================  ==========================================  ===============================
preToolUse             steps/toolCallRequest (every tool)          ``permission: deny``
beforeShellExecution   steps/toolCallRequest of ``Bash``           ``permission: deny``
beforeMCPExecution     steps/toolCallRequest of the MCP tool       ``permission: deny``
beforeReadFile         steps/toolCallRequest of ``Read``           ``permission: deny``
beforeSubmitPrompt     steps/userMessage                           ``continue: false``, exit 2
sessionStart           steps/sessionStart (recorded only)          ``{}``
postToolUse, after*    steps/toolCallResult (recorded only)        ``{}``
others                 none                                        ``{}``
=====================  ==========================================  ===============================

An ASK is ``permission: ask`` where Cursor shows a prompt (shell and MCP gates); at
``preToolUse``, which accepts ``ask`` but does not enforce it, and at ``beforeReadFile``, it is
a deny saying a person's approval is needed. ``beforeReadFile`` carries the file's content;
only its path is decided and recorded.

Cursor's ``beforeMCPExecution`` names the tool but not the server, only its ``url`` or
``command``: the server is named by the URL's host or the command's program.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from agbom.adapters import _base, _hosts, host_replies, names
from agbom.adapters.interface import MalformedEvent, StepCall, Verdict

_RESULT_EVENTS = frozenset(
    {"postToolUse", "postToolUseFailure", "afterShellExecution", "afterMCPExecution"}
)


def mcp_server_label(event: Mapping[str, Any]) -> str:
    """The MCP server of a ``beforeMCPExecution``: its URL's host, else its program."""
    url = _base.opt_str(event, "url")
    if url:
        try:
            host = urlsplit(url).hostname
        except ValueError:
            host = None
        if host:
            return host
    command = _base.opt_str(event, "command")
    if command:
        first = command.split()[0] if command.split() else command
        return os.path.basename(first) or first
    return "unknown-mcp-server"


class CursorAdapter(_hosts.HostAdapter):
    """``agbom hook cursor`` and ``POST /hooks/cursor``."""

    name = host_replies.CURSOR

    def translate(self, event: dict[str, Any], *, env: Mapping[str, str]) -> StepCall:
        name = _base.req_str(event, "hook_event_name", "Cursor hook input")
        session = _base.opt_str(event, "session_id") or _base.opt_str(event, "conversation_id")
        common = self.common(event, name, session, env=env)
        if name == "preToolUse":
            tool_name = _base.req_str(event, "tool_name", "Cursor preToolUse input")
            return _hosts.tool_request(
                common, _cursor_tool(tool_name), _hosts.arguments_of(event.get("tool_input"))
            )
        if name == "beforeShellExecution":
            command = _base.req_str(event, "command", "Cursor beforeShellExecution input")
            arguments = {"command": command, "cwd": event.get("cwd")}
            return _hosts.tool_request(common, names.builtin(self.name, "Shell"), arguments)
        if name == "beforeMCPExecution":
            tool_name = _base.req_str(event, "tool_name", "Cursor beforeMCPExecution input")
            tool = names.mcp(mcp_server_label(event), tool_name)
            return _hosts.tool_request(common, tool, _hosts.arguments_of(event.get("tool_input")))
        if name == "beforeReadFile":
            path = _base.req_str(event, "file_path", "Cursor beforeReadFile input")
            return _hosts.tool_request(
                common, names.builtin(self.name, "Read"), {"file_path": path}
            )
        if name == "beforeSubmitPrompt":
            return _hosts.user_prompt(common, event.get("prompt"))
        if name == "sessionStart":
            context = {k: event.get(k) for k in ("cursor_version", "composer_mode", "model")}
            return _hosts.session_start(common, context)
        if name in _RESULT_EVENTS:
            ran = _base.opt_str(event, "tool_name")
            if name == "afterShellExecution" or ran is None:
                tool = names.builtin(self.name, "Shell")
            elif name == "afterMCPExecution":
                tool = names.mcp(mcp_server_label(event), ran)
            else:
                tool = _cursor_tool(ran)
            failed = name == "postToolUseFailure"
            output = next(
                (event[k] for k in ("tool_output", "result_json", "output", "error_message")
                 if k in event),
                None,
            )  # fmt: skip
            return _hosts.tool_result(common, tool, output, failed=failed)
        return _hosts.no_step(common)

    def allow(self, call: StepCall) -> _Reply:
        return host_replies.cursor_allow(call.event)

    def deny(self, call: StepCall, message: str) -> _Reply:
        return host_replies.cursor_refuse(call.event, message)

    def ask(self, verdict: Verdict, call: StepCall) -> _Reply:
        """``permission: ask`` where Cursor shows a prompt; a deny where it would not."""
        if call.event in ("beforeShellExecution", "beforeMCPExecution"):
            said = verdict.question or verdict.message(call.subject)
            return host_replies.cursor_refuse(call.event, said, permission="ask")
        return super().ask(verdict, call)


_Reply = tuple[bytes, int]


def _cursor_tool(tool_name: str) -> names.Tool:
    """A ``preToolUse`` tool: ``MCP:<tool>`` names an MCP tool without its server."""
    if tool_name.startswith("MCP:") and len(tool_name) > 4:
        return names.mcp("unknown-mcp-server", tool_name[4:], host_name=tool_name)
    if not tool_name.strip():
        raise MalformedEvent("Cursor preToolUse: empty tool_name")
    return names.builtin(host_replies.CURSOR, tool_name)
