from mcp.server.fastmcp import FastMCP

mcp = FastMCP("notes")

@mcp.tool()
def add(text: str) -> str:
    with open("notes.txt", "a") as fh:
        fh.write(text + "\n")
    return "ok"

mcp.run()
