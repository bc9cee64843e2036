/**
 * `lambdagent serve <config> [--port N] [--host H] [--token T] [--ws] [--mcp | --a2a]`: an agent over HTTP
 * (SSE streaming, and WebSocket with `--ws`), with `--mcp` as an MCP tool, or with `--a2a` (or an `a2a.server`
 * block in the config) as an A2A server.
 */
import { resolve } from "node:path"
import { type Host, noPlugins, pluginTools } from "./plugins.ts"
import type { Registration } from "./shell.ts"
import { Term } from "lambdagent"
import { buildRuntime, loadAgent, shellTools } from "./agent.ts"
import { serveCli } from "./cliServer.ts"
import { parseSandboxFlag, SANDBOX_FLAGS, SANDBOX_HELP } from "./sandbox.ts"
import { OTEL_FLAGS, OTEL_HELP, otelOptions } from "./otel.ts"
import { bearerToken, onInterrupt, TOKEN_OPTION_HELP } from "./io.ts"
import { collect, hostPolicy, httpSecurity } from "./mcp.ts"
import { integer, port, positive, usageError } from "./options.ts"
import { optionsOf, PG_HELP } from "./cluster.ts"

interface ServeOptions {
  readonly port?: number
  readonly host?: string
  readonly token?: string
  readonly timeout?: number
  readonly model?: string
  readonly tool: Array<string>
  readonly mcp?: boolean
  readonly a2a?: boolean
  readonly http?: number
  readonly allowHost: Array<string>
  readonly allowOrigin: Array<string>
  readonly sandbox?: string
  readonly pausedDir?: string
  readonly otel?: string
  readonly ws?: boolean
  readonly cli?: boolean
  readonly cluster?: boolean
  readonly pg?: string
  readonly prefix?: string
  readonly shards?: number
}

const CLUSTER_ONLY = ["pg", "prefix", "shards"] as const

/** Plain serve whose runs are handed to the cluster's runners (see docs/cluster.md). */
const serveOnCluster = async (config: string, options: ServeOptions, host: Host): Promise<void> => {
  const refused = (
    [
      ["--mcp", options.mcp],
      ["--a2a", options.a2a],
      ["--cli", options.cli],
      ["--ws", options.ws],
      ["--paused-dir", options.pausedDir]
    ] as const
  )
    .filter(([, given]) => given !== undefined && given !== false)
    .map(([flag]) => flag)
  if (refused.length > 0) throw usageError(`--cluster serves plain HTTP: ${refused.join(", ")} cannot go with it (runs that ask wait on the cluster)`)
  const token = bearerToken(options.token)
  const policy = await hostPolicy(options)
  const agent = await loadAgent(config, { tools: [...shellTools(options.tool), ...pluginTools(host)] })
  const { connect, handoff } = await import("lambdagent/cluster")
  const cluster = await connect(optionsOf({ ...options, format: "text" }, { role: "client" }))
  try {
    onInterrupt(() => {})
    const http = await import("lambdagent/http")
    await http.serveCommand({
      agent: agent.term,
      name: agent.name,
      lambda: Term.pretty(agent.term),
      handoff: handoff(cluster, {
        ...(options.model !== undefined ? { model: options.model } : {}),
        ...(agent.compiled !== undefined ? { budget: agent.compiled.budget } : {})
      }),
      webSocket: false,
      ...(token !== undefined ? { token } : {}),
      ...policy,
      ...(options.timeout !== undefined ? { timeoutMs: options.timeout * 1000 } : {}),
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.host !== undefined ? { host: options.host } : {})
    })
  } finally {
    await cluster.close()
  }
}

export const serveCommand = async (config: string, options: ServeOptions, host: Host = noPlugins): Promise<void> => {
  if (options.cluster === true) return serveOnCluster(config, options, host)
  const clusterOnly = CLUSTER_ONLY.filter((name) => options[name] !== undefined)
  if (clusterOnly.length > 0) throw usageError(`${clusterOnly.map((name) => `--${name}`).join(", ")} applies to --cluster only`)
  if ([options.mcp, options.a2a, options.cli].filter((o) => o === true).length > 1) throw usageError("choose one of --mcp, --a2a and --cli")
  if (options.ws === true && (options.mcp === true || options.a2a === true || options.cli === true))
    throw usageError("--ws applies to plain serve only (not --mcp, --a2a or --cli)")
  if (options.mcp !== true && options.http !== undefined) {
    throw usageError("--http applies to --mcp only (plain serve and --a2a listen with --port)")
  }
  const mcpSecurity = options.mcp === true ? await httpSecurity(options, "--mcp --http", async () => (await import("lambdagent/http")).bearerCheck) : {}
  const token = options.mcp === true ? undefined : bearerToken(options.token)
  const policy = options.mcp === true ? {} : await hostPolicy(options)
  const extraTools = [...shellTools(options.tool), ...pluginTools(host)]
  const sandbox = parseSandboxFlag(options.sandbox)
  const agent = await loadAgent(config, { tools: extraTools })
  const otel = otelOptions(options.otel, process.env, agent.compiled?.runtime.otel)
  const { close, notices, runtime } = await buildRuntime(agent, {
    ...(options.model !== undefined ? { model: options.model } : {}),
    extraTools,
    plugins: host.plugins,
    ...(sandbox !== undefined ? { sandbox } : {}),
    ...(otel !== undefined ? { otel } : {}),
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
      ...(options.http !== undefined ? { http: options.http } : {}),
      ...(options.host !== undefined ? { host: options.host } : {}),
      ...mcpSecurity
    })
    await close()
    return
  }
  const cliServer = agent.compiled?.config.cli?.server
  if (
    options.cli === true ||
    (cliServer?.enabled === true && options.a2a !== true && options.ws !== true && agent.compiled?.config.a2a?.server === undefined)
  ) {
    await serveCli(agent.term, runtime, cliServer ?? {}, {
      baseDir: agent.baseDir,
      ...(options.host !== undefined ? { host: options.host } : {}),
      ...(options.port !== undefined ? { port: options.port } : {}),
      log: (line) => process.stderr.write(`${line}\n`)
    })
    await close()
    return
  }
  const timeout = options.timeout === undefined ? undefined : options.timeout * 1000
  const listenPort = options.port
  // what plain serve and --a2a take alike
  const common = {
    agent: agent.term,
    runtime,
    name: agent.name,
    ...(token !== undefined ? { token } : {}),
    ...policy,
    ...(timeout !== undefined ? { timeoutMs: timeout } : {})
  }
  const a2aServer = agent.compiled?.config.a2a?.server
  if (options.a2a === true || a2aServer !== undefined) {
    const a2a = await import("lambdagent/a2a")
    const description = agent.compiled?.config.description
    const host = options.host ?? a2aServer?.host
    await a2a.serveCommand({
      ...common,
      ...(description !== undefined ? { description } : {}),
      ...(a2aServer?.version !== undefined ? { version: a2aServer.version } : {}),
      ...(a2aServer?.skills !== undefined ? { skills: a2aServer.skills } : {}),
      ...(a2aServer?.url !== undefined ? { publicUrl: a2aServer.url } : {}),
      ...(a2aServer?.maxTasks !== undefined ? { maxTasks: a2aServer.maxTasks } : {}),
      port: listenPort ?? a2aServer?.port ?? a2a.defaultCommandPort,
      ...(host !== undefined ? { host } : {})
    })
  } else {
    const http = await import("lambdagent/http")
    await http.serveCommand({
      ...common,
      lambda: Term.pretty(agent.term),
      webSocket: options.ws === true,
      ...(options.pausedDir !== undefined ? { pausedRunsDirectory: resolve(options.pausedDir) } : {}),
      ...(listenPort !== undefined ? { port: listenPort } : {}),
      ...(options.host !== undefined ? { host: options.host } : {})
    })
  }
  await close()
}

export const registerServe: Registration = (program, run, host) => {
  program
    .command("serve")
    .description("serve an agent over HTTP (POST /run, SSE streaming, WebSocket with --ws), as an MCP tool with --mcp, or as an A2A agent with --a2a")
    .argument("<config>", "the agent: a .yml/.yaml config or a .json term")
    .option("--port <n>", "HTTP port (default 8080; with --a2a, a2a.server.port or 8000)", port("--port"))
    .option("--host <host>", "address to listen on (default 127.0.0.1)")
    .option("--token <token>", `${TOKEN_OPTION_HELP}; with --mcp, for --http only`)
    .option("--timeout <seconds>", "per-request time limit (default 120)", positive("--timeout", "seconds"))
    .option("--model <spec>", "send every LLM call to this model")
    .option("--tool <NAME=CMD>", "a shell command as a tool (repeatable)", collect, [])
    .option(SANDBOX_FLAGS, SANDBOX_HELP)
    .option(OTEL_FLAGS, OTEL_HELP)
    .option(
      "--cli",
      "serve over the command line as the config's cli.server says: one request per line on stdin (pipe), a Unix socket or a TCP port (the default when cli.server.enabled is true)"
    )
    .option("--ws", "also stream runs over WebSocket at /ws (off by default)")
    .option("--cluster", "hand every run to the cluster's runners (lambdagent cluster runner) instead of running it in this process")
    .option("--pg <url>", `with --cluster: ${PG_HELP}`)
    .option("--prefix <prefix>", "with --cluster: prefix of the cluster's tables (default lambdagent_cluster)")
    .option("--shards <n>", "with --cluster: the cluster's shard count (default 64)", integer("--shards", 1, 10_000))
    .option("--paused-dir <dir>", "keep runs paused at an ask in this directory, across restarts (default: in memory); POST /runs/:id/resume goes on")
    .option("--mcp", "serve the agent as one MCP tool (stdio, or Streamable HTTP with --http)")
    .option("--http <port>", "with --mcp: listen for Streamable HTTP on this port", port("--http"))
    .option(
      "--a2a",
      "serve the agent as an A2A server: agent card, message/send, message/stream, tasks/get, tasks/cancel (the default when the config has an a2a.server block)"
    )
    .option("--allow-host <host>", "also accept this Host header (name or name:port; repeatable); with --mcp, for --http only", collect, [])
    .option("--allow-origin <origin>", "also accept this browser Origin (e.g. http://localhost:5173; repeatable); with --mcp, for --http only", collect, [])
    .action(async (config: string, options: ServeOptions) =>
      run(
        () => serveCommand(config, options, host),
        () => "text"
      )
    )
}
