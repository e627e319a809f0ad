"""opencode, through agbom's plugin (``agbom/adapters/opencode_plugin/agbom.ts``).

opencode has no command hooks: its plugins run in process. agbom's plugin, installed by
``agbom hook install opencode``, runs ``agbom hook opencode`` (thin or standalone mode, so the
same bounds, token and failure modes apply as for every other host) with one event on stdin,
and throws when the answer is not an allow, which stops the tool:

===================  ==============================================  ========================
plugin event         ACS step                                        a deny answers
===================  ==============================================  ========================
tool.execute.before  steps/toolCallRequest; the ``skill`` tool:      ``{"decision":"deny",
                     steps/skillRegister then steps/skillLoad         "reason":..}`` (thrown)
others               none                                            ``{"decision":"allow"}``
===================  ==============================================  ========================

The event is the plugin's: ``{"hook_event_name", "session_id", "call_id", "tool", "args",
"cwd", "worktree", "mcp_servers"}``. opencode names an MCP tool ``<server>_<tool>``; the
plugin sends the configured server names (``mcp_servers``) so the split takes the longest
that fits. An ASK, a DEFER or a MODIFY is a deny saying why (the plugin cannot ask).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agbom.adapters import _base, _hosts, host_replies, host_skills, names
from agbom.adapters.interface import StepCall

EVENT = "tool.execute.before"


def opencode_tool(tool_name: str, servers: list[str]) -> names.Tool:
    known = names.builtin(host_replies.OPENCODE, tool_name)
    if known.name != known.host_name or "_" not in tool_name:
        return known
    split = names.split_single_underscore(tool_name, "", servers)
    if split and (not servers or split[0] in servers):
        return names.mcp(*split, host_name=tool_name)
    return known


class OpencodeAdapter(_hosts.HostAdapter):
    """``agbom hook opencode`` (run by the plugin) and ``POST /hooks/opencode``."""

    name = host_replies.OPENCODE

    def translate(self, event: dict[str, Any], *, env: Mapping[str, str]) -> StepCall:
        name = _base.req_str(event, "hook_event_name", "opencode plugin event")
        common = self.common(event, name, _base.opt_str(event, "session_id"), env=env)
        if name != EVENT:
            return _hosts.no_step(common)
        tool_name = _base.req_str(event, "tool", "opencode tool.execute.before event")
        arguments = _hosts.arguments_of(event.get("args"))
        if tool_name == host_skills.OPENCODE_SKILL_TOOL:
            skill = _base.opt_str(arguments, "name")
            if skill:
                return _hosts.skill_load(common, event, skill, trigger="agent_decision")
        listed = event.get("mcp_servers")
        servers = (
            [s for s in listed if isinstance(s, str)][:256] if isinstance(listed, list) else []
        )
        return _hosts.tool_request(common, opencode_tool(tool_name, servers[:256]), arguments)

    def allow(self, call: StepCall) -> tuple[bytes, int]:
        return host_replies.opencode_allow()

    def deny(self, call: StepCall, message: str) -> tuple[bytes, int]:
        return host_replies.opencode_deny(message)
