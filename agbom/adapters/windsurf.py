"""Windsurf (Cascade) command hooks (``~/.codeium/windsurf/hooks.json``,
``.windsurf/hooks.json``, ``/etc/windsurf/hooks.json``).

Event -> ACS step:

=================  ===========================================  ===================================
Windsurf event     ACS step                                     a deny answers
=================  ===========================================  ===================================
pre_run_command    steps/toolCallRequest of ``Bash``            exit 2, the reason on stderr
pre_mcp_tool_use   steps/toolCallRequest of the MCP tool        exit 2, the reason on stderr
pre_read_code      steps/toolCallRequest of ``Read``            exit 2, the reason on stderr
pre_write_code     steps/toolCallRequest of ``Write``           exit 2, the reason on stderr
pre_user_prompt    steps/userMessage                            exit 2, the reason on stderr
post_* events      steps/toolCallResult (recorded only)         nothing
others             none                                         nothing
=================  ===========================================  ===================================

Windsurf reads no JSON decision and has no "ask": exit 2 blocks, and stderr is what the user
(with ``show_output``) and Cascade see. An ASK, a DEFER or a MODIFY is therefore a block
saying why. The session is the ``trajectory_id``; the event's details are in ``tool_info``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.adapters import _base, _hosts, host_replies, names
from agbom.adapters.interface import MalformedEvent, StepCall

_TOOLS = {
    "pre_run_command": names.SHELL,
    "post_run_command": names.SHELL,
    "pre_read_code": names.READ,
    "post_read_code": names.READ,
    "pre_write_code": names.WRITE,
    "post_write_code": names.WRITE,
}


class WindsurfAdapter(_hosts.HostAdapter):
    """``agbom hook windsurf`` and ``POST /hooks/windsurf``."""

    name = host_replies.WINDSURF

    def translate(self, event: dict[str, Any], *, env: Mapping[str, str]) -> StepCall:
        name = _base.req_str(event, "agent_action_name", "Windsurf hook input")
        session = _base.opt_str(event, "trajectory_id") or _base.opt_str(event, "execution_id")
        common = self.common(event, name, session, env=env)
        info = event.get("tool_info")
        if info is None:
            info = {}
        if not isinstance(info, dict):
            raise MalformedEvent(f"Windsurf {name}: 'tool_info' must be an object")
        if name in _TOOLS:
            tool = names.Tool(name=_TOOLS[name], host_name=name)
            arguments = {k: v for k, v in info.items() if k not in ("output", "content")}
            if name.startswith("pre_"):
                if name == "pre_run_command":
                    _base.req_str(info, "command_line", "Windsurf pre_run_command tool_info")
                return _hosts.tool_request(common, tool, arguments)
            return _hosts.tool_result(common, tool, info.get("output"), failed=False)
        if name in ("pre_mcp_tool_use", "post_mcp_tool_use"):
            server = _base.req_str(info, "mcp_server_name", f"Windsurf {name} tool_info")
            tool_name = _base.req_str(info, "mcp_tool_name", f"Windsurf {name} tool_info")
            tool = names.mcp(server, tool_name)
            if name == "pre_mcp_tool_use":
                arguments = _hosts.arguments_of(info.get("mcp_tool_arguments"))
                return _hosts.tool_request(common, tool, arguments)
            return _hosts.tool_result(common, tool, info.get("mcp_result"), failed=False)
        if name == "pre_user_prompt":
            return _hosts.user_prompt(common, info.get("user_prompt"))
        return _hosts.no_step(common)

    def allow(self, call: StepCall) -> tuple[bytes, int]:
        return host_replies.EMPTY

    def deny(self, call: StepCall, message: str) -> tuple[bytes, int]:
        # The reason travels on stderr (the adapter's HookReply.stderr, or thin mode's copy).
        return b"", 2
