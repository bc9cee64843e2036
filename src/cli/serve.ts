/**
 * `lambdagent serve <config> [--port N] [--host H] [--token T] [--mcp]`: an agent over HTTP (SSE and
 * WebSocket streaming), or with `--mcp` as an MCP tool.
 */
import type { Registration } from "./shell.ts"
import { Term } from "lambdagent"
import { buildRuntime, loadAgent, shellTools } from "./agent.ts"
import { CliError, ExitCode, onInterrupt } from "./io.ts"

interface ServeOptions {
  readonly port?: string
  readonly host?: string
  readonly token?: string
  readonly timeout?: string
  readonly model?: string
  readonly tool: Array<string>
  readonly mcp?: boolean
  readonly http?: string
}

const port = (text: string | undefined, flag: string): number | undefined => {
  if (text === undefined) return undefined
  const n = Number(text)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new CliError(`${flag} expects a port number, got ${JSON.stringify(text)}`, ExitCode.failed, "UsageError")
  return n
}

export const serveCommand = async (config: string, options: ServeOptions): Promise<void> => {
  const extraTools = shellTools(options.tool)
  const agent = await loadAgent(config, { tools: extraTools })
  const { close, notices, runtime } = await buildRuntime(agent, {
    ...(options.model !== undefined ? { model: options.model } : {}),
    extraTools,
    ...(agent.compiled !== undefined ? { budgets: agent.compiled.budget } : {})
  })
  for (const notice of notices) process.stderr.write(`${notice}\n`)
  // the servers shut down gracefully on SIGINT/SIGTERM themselves; a second Ctrl+C exits at once
  onInterrupt(() => {})
  if (options.mcp === true) {
    const mcp = await import("lambdagent/mcp")
    await mcp.serveAgentCommand({
      agent: agent.term,
      runtime,
      name: agent.name,
      lambda: Term.pretty(agent.term),
      ...(options.http !== undefined ? { http: port(options.http, "--http")! } : {}),
      ...(options.host !== undefined ? { host: options.host } : {})
    })
    await close()
    return
  }
  const http = await import("lambdagent/http")
  const timeout = options.timeout === undefined ? undefined : Number(options.timeout) * 1000
  const listenPort = port(options.port, "--port")
  await http.serveCommand({
    agent: agent.term,
    runtime,
    name: agent.name,
    lambda: Term.pretty(agent.term),
    ...(listenPort !== undefined ? { port: listenPort } : {}),
    ...(options.host !== undefined ? { host: options.host } : {}),
    ...(options.token !== undefined ? { token: options.token } : process.env.LAMBDAGENT_TOKEN !== undefined ? { token: process.env.LAMBDAGENT_TOKEN } : {}),
    ...(timeout !== undefined && Number.isFinite(timeout) ? { timeoutMs: timeout } : {})
  })
  await close()
}

const collect = (value: string, previous: Array<string>) => [...previous, value]

export const registerServe: Registration = (program, run) => {
  program
    .command("serve")
    .description("serve an agent over HTTP (POST /run, SSE and WebSocket streaming), or as an MCP tool with --mcp")
    .argument("<config>", "the agent: a .yml/.yaml config or a .json term")
    .option("--port <n>", "HTTP port (default 8080)")
    .option("--host <host>", "address to listen on (default 127.0.0.1)")
    .option("--token <token>", "require Authorization: Bearer <token> (default $LAMBDAGENT_TOKEN)")
    .option("--timeout <seconds>", "per-request time limit (default 120)")
    .option("--model <spec>", "send every LLM call to this model")
    .option("--tool <NAME=CMD>", "a shell command as a tool (repeatable)", collect, [])
    .option("--mcp", "serve the agent as one MCP tool (stdio, or Streamable HTTP with --http)")
    .option("--http <port>", "with --mcp: listen for Streamable HTTP on this port")
    .action(async (config: string, options: ServeOptions) => run(() => serveCommand(config, options), () => "text"))
}
