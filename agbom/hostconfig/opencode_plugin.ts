// agbom's opencode plugin (agbom-managed: written by `agbom hook install opencode`, removed by
// `agbom hook uninstall opencode`; edits here are overwritten by the next install).
//
// Before opencode runs any tool, the native `skill` tool (every skill load) included, the call
// is sent to `agbom hook opencode` as one JSON event on stdin, exactly as a command hook of
// another host would be, and the tool runs only when agbom answers {"decision":"allow"}.
// Anything else (a deny, an error, no answer within the time limit, agbom missing) throws,
// which stops the tool: this plugin fails closed. Whether agbom itself fails open or closed
// when its server is down is the hook command's --fail-open / --fail-closed.
import type { Plugin } from "@opencode-ai/plugin"
import { spawn } from "node:child_process"

const AGBOM_COMMAND: string[] = ["agbom", "hook", "opencode"] // agbom-install: command
const TIMEOUT_MS = 10_000 // agbom-install: timeout
const MAX_ANSWER_BYTES = 1024 * 1024

type Answer = { decision?: unknown; reason?: unknown }

function askAgbom(event: Record<string, unknown>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const [program, ...args] = AGBOM_COMMAND
    let out = ""
    let err = ""
    let size = 0
    let settled = false
    const child = spawn(program, args, { stdio: ["pipe", "pipe", "pipe"] })
    const settle = (action: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      action()
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      settle(() => reject(new Error(`agbom: no answer within ${TIMEOUT_MS} ms; the tool is not run`)))
    }, TIMEOUT_MS)
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      size += chunk.length
      if (size > MAX_ANSWER_BYTES) {
        child.kill("SIGKILL")
        settle(() => reject(new Error("agbom: the hook's answer is too large; the tool is not run")))
        return
      }
      out += chunk
    })
    child.stderr.on("data", (chunk: string) => {
      if (err.length < 4096) err += chunk
    })
    child.on("error", (error: Error) =>
      settle(() => reject(new Error(`agbom: cannot run ${program}: ${error.message}; the tool is not run`))),
    )
    child.on("close", (code: number | null) =>
      settle(() => {
        if (code !== 0) {
          const said = err.trim().split("\n").slice(-1)[0] ?? ""
          reject(new Error(`agbom: the hook exited ${code}${said ? `: ${said}` : ""}; the tool is not run`))
          return
        }
        try {
          resolve(JSON.parse(out) as Answer)
        } catch {
          reject(new Error("agbom: the hook's answer is not JSON; the tool is not run"))
        }
      }),
    )
    child.stdin.on("error", () => undefined) // a hook that exits early is reported by "close"
    child.stdin.end(JSON.stringify(event))
  })
}

export const AgbomPlugin: Plugin = async ({ client, directory, worktree }) => {
  // The configured MCP servers' names, so that agbom can split a `<server>_<tool>` name.
  let servers: string[] | undefined
  const mcpServers = async (): Promise<string[]> => {
    if (servers === undefined) {
      try {
        const config = await client.config.get()
        servers = Object.keys(config.data?.mcp ?? {})
      } catch {
        servers = []
      }
    }
    return servers
  }
  return {
    "tool.execute.before": async (input, output) => {
      const answer = await askAgbom({
        hook_event_name: "tool.execute.before",
        session_id: input.sessionID,
        call_id: input.callID,
        tool: input.tool,
        args: output.args,
        cwd: directory,
        worktree,
        mcp_servers: await mcpServers(),
      })
      if (answer.decision !== "allow") {
        throw new Error(typeof answer.reason === "string" && answer.reason ? answer.reason : "agbom: denied")
      }
    },
  }
}
