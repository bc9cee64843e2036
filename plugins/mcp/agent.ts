/**
 * An agent as an MCP tool: `lambdagent serve <config> --mcp`. The server offers one tool (the
 * agent: text in, result out) and its lambda expression as a resource; it reports progress per
 * step when the client asks for it, and a cancelled request cancels the run and its LLM calls.
 *
 * @since 0.1.0
 * @module
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { type Runtime, type Term, Value } from "lambdagent"
import type { ServerModule } from "./module.ts"
import { errorInfo, errorResult } from "./results.ts"
import { createLambdaServer } from "./server.ts"
import { serveUntilClosed } from "./signals.ts"
import { type HttpSecurityOptions, httpStartupWarnings, type ServeHandle, serveHttp, serveStdio } from "./transports.ts"

/**
 * What to serve.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { AgentServeOptions } from "lambdagent/mcp"
 * const o = (runtime: AgentServeOptions["runtime"], agent: AgentServeOptions["agent"]): AgentServeOptions => ({ agent, runtime, name: "summarizer" })
 * ```
 */
export interface AgentServeOptions {
  readonly agent: Term.Term
  readonly runtime: Runtime.Runtime
  /** The tool's name (letters, digits, `_ . -`; others become `_`). */
  readonly name: string
  readonly description?: string
  /** The agent's lambda expression, served as `lambda://agent`. */
  readonly lambda?: string
}

/** What a client is told at initialisation: this server is one agent, not the tool-evolving calculus. */
const agentInstructions = (options: AgentServeOptions): string =>
  `This server offers one agent, ${options.name}, as the tool ${toolName(options.name)} {input, session?}: send the ` +
  `input as text and get the agent's answer (structured content holds the result and run statistics). Pass the same ` +
  `session id on later calls to keep its memory and conversation. The resource lambda://agent is the agent's lambda ` +
  `expression.${options.description !== undefined ? ` The agent: ${options.description}` : ""}`

const toolName = (name: string) => name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 128) || "agent"

/**
 * The module serving an agent: one tool and one resource.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { createRuntime, Term } from "lambdagent"
 * import { agentModule, createLambdaServer } from "lambdagent/mcp"
 * const runtime = createRuntime()
 * const server = await createLambdaServer({ system: false, modules: [agentModule({ agent: Term.llm({ system: "Echo." }), runtime, name: "echo" })] })
 * ```
 */
export const agentModule = (options: AgentServeOptions): ServerModule => {
  const name = toolName(options.name)
  const lambda = options.lambda ?? ""
  return {
    name: `agent:${name}`,
    tools: () => [
      {
        name,
        description: options.description ?? `The agent ${options.name}: give it an input, get its answer.${lambda !== "" ? ` λ: ${lambda.slice(0, 300)}` : ""}`,
        inputSchema: {
          type: "object",
          properties: {
            input: { type: "string", description: "The agent's input" },
            session: { type: "string", description: "Keep memory and conversation across calls under this id" }
          },
          required: ["input"]
        },
        call: async (args, context): Promise<CallToolResult> => {
          if (typeof args.input !== "string") return errorResult({ kind: "InvalidArguments", message: "input must be a string" })
          const session = typeof args.session === "string" ? args.session : undefined
          let steps = 0
          // progress goes out before the result, so a client sees every step while the call is open
          const sent: Array<Promise<void>> = []
          try {
            let output: Runtime.RunOutput | undefined
            for await (const event of options.runtime.stream(options.agent, args.input, {
              signal: context.signal,
              ...(session !== undefined ? { session } : {})
            })) {
              if (event.type === "result") output = event.output
              else if (event.type === "trace" && context.progress !== undefined) sent.push(context.progress(++steps, `${event.event.kind} ${event.event.name}`))
            }
            await Promise.all(sent)
            const result = output!
            const text = Value.toText(result.value)
            return {
              content: [{ type: "text", text }],
              structuredContent: { result: result.result as unknown, stats: result.stats as unknown } as Record<string, unknown>
            }
          } catch (error) {
            if (context.signal.aborted) return errorResult({ kind: "Cancelled", message: "the run was cancelled" })
            return errorResult(errorInfo(error))
          }
        }
      }
    ],
    resources: () => [
      {
        uri: "lambda://agent",
        name: `${options.name} (lambda expression)`,
        mimeType: "text/plain",
        read: () => lambda
      }
    ]
  }
}

/**
 * Where and how {@link serveAgent} serves: stdio by default, or Streamable HTTP on `http` (a port)
 * with the HTTP security options (`Host`/`Origin` allow-lists, `authorize`).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { bearerCheck } from "lambdagent/http"
 * import type { AgentTransportOptions } from "lambdagent/mcp"
 * const o: AgentTransportOptions = { http: 8765, authorize: bearerCheck("s3cret") }
 * ```
 */
export interface AgentTransportOptions extends HttpSecurityOptions {
  /** Serve Streamable HTTP on this port (0: any free port) instead of stdio. */
  readonly http?: number
  /** Interface for HTTP (default 127.0.0.1). */
  readonly host?: string
  /** With `http`: close sessions idle this long, in milliseconds (default: one hour). */
  readonly sessionIdleMs?: number
}

/**
 * Serve an agent over stdio (default) or Streamable HTTP (`http: port`) until the input ends or
 * the process is told to stop.
 *
 * @since 0.1.0
 * @category commands
 * @example
 * ```ts
 * import { createRuntime, Term } from "lambdagent"
 * import { serveAgent } from "lambdagent/mcp"
 * const handle = await serveAgent({ agent: Term.llm({ system: "Echo." }), runtime: createRuntime(), name: "echo", http: 0 })
 * await handle.close()
 * ```
 */
export const serveAgent = async (options: AgentServeOptions & AgentTransportOptions): Promise<ServeHandle> => {
  const server = await createLambdaServer({
    system: false,
    name: `lambdagent agent ${options.name}`,
    instructions: agentInstructions(options),
    modules: [agentModule(options)],
    store: ":memory:"
  })
  if (options.http === undefined) return serveStdio(server)
  const { allowedHosts, allowedOrigins, authorize, host, sessionIdleMs } = options
  try {
    return await serveHttp(server, {
      port: options.http,
      ...(host !== undefined ? { host } : {}),
      ...(allowedHosts !== undefined ? { allowedHosts } : {}),
      ...(allowedOrigins !== undefined ? { allowedOrigins } : {}),
      ...(authorize !== undefined ? { authorize } : {}),
      ...(sessionIdleMs !== undefined ? { sessionIdleMs } : {})
    })
  } catch (error) {
    await server.close()
    throw error
  }
}

/**
 * `lambdagent serve <config> --mcp [--http PORT]`: serve until stopped, then close the runtime.
 *
 * @since 0.1.0
 * @category commands
 * @example
 * ```ts
 * import { createRuntime, Term } from "lambdagent"
 * import { serveAgentCommand } from "lambdagent/mcp"
 * await serveAgentCommand({ agent: Term.llm({ system: "Echo." }), runtime: createRuntime(), name: "echo" })
 * ```
 */
export const serveAgentCommand = async (options: AgentServeOptions & AgentTransportOptions): Promise<void> => {
  const handle = await serveAgent(options)
  if (handle.url !== undefined) {
    process.stderr.write(`[lambdagent] agent ${options.name} as an MCP tool at ${handle.url}\n`)
    for (const warning of httpStartupWarnings(options.host ?? "127.0.0.1", options)) process.stderr.write(`[lambdagent] ${warning}\n`)
  }
  await serveUntilClosed(handle)
}
