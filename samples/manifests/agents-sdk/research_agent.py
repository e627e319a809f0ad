"""A research agent built with the OpenAI Agents SDK (a sample for `agbom scan`)."""

import os

from agents import Agent, HostedMCPTool
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

filesystem = MCPServerStdio(
    name="filesystem",
    params={
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "./notes"],
        "env": {"NOTES_TOKEN": os.environ["NOTES_TOKEN"]},
    },
)

search = MCPServerStreamableHttp(
    name="search",
    params={"url": "https://search.example.com/mcp"},
)

agent = Agent(
    name="researcher",
    instructions="Answer with sources.",
    mcp_servers=[filesystem, search],
    tools=[
        HostedMCPTool(
            tool_config={
                "type": "mcp",
                "server_label": "deepwiki",
                "server_url": "https://mcp.deepwiki.com/mcp",
                "require_approval": "never",
            }
        )
    ],
)
