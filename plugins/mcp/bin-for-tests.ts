/**
 * Starts the lambda MCP server the way `lambdagent mcp` does, for the tests:
 * `node --import tsx plugins/mcp/bin-for-tests.ts [--http PORT] [--store PATH] [--max-fuel N]
 * [--timeout-ms N] [--max-message-bytes N] [--allow-double] [--fault-tools] [--starts FILE [--max-starts N]]`.
 * With `--allow-double`, terms may call the host tool `double`, answered by an oracle that doubles
 * its (integer) input. `--print-stdout` writes a line with `console.log` after start-up (to show
 * that it lands on standard error). `--fault-tools` adds tools that misbehave on purpose, for the
 * client's tests: `pid`, `exit` (the process exits during the call), `sleep {ms}` (honours
 * cancellation), `slow_first {ms, times}` (slow on its first `times` calls) and `stats`.
 * `--starts FILE` appends a line to FILE at every start; with `--max-starts N`, a start that would
 * be the N+1th is refused (exit code 3).
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as z from "zod"
import { type AnswerOracle, defineTool, mcpCommand, type ServerModule, type ToolCallContext } from "./index.ts"

const args = process.argv.slice(2)
const value = (flag: string): string | undefined => {
  const i = args.indexOf(flag)
  return i === -1 ? undefined : args[i + 1]
}
const number = (flag: string): number | undefined => {
  const v = value(flag)
  return v === undefined ? undefined : Number(v)
}

const double: AnswerOracle = (request) => {
  if (request.kind !== "tool" || request.name !== "double") throw new Error(`unexpected request ${request.kind}`)
  return Number(request.input) * 2
}

const text = (t: string): CallToolResult => ({ content: [{ type: "text", text: t }] })

/** Wait `ms`, or until the call is cancelled. */
const pause = (ms: number, context: ToolCallContext): Promise<"done" | "cancelled"> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve("done"), ms)
    context.signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer)
        resolve("cancelled")
      },
      { once: true }
    )
  })

const stats = { sleeps: 0, cancelled: 0, slowFirst: 0 }
const faultTools: ServerModule = {
  name: "fault-tools",
  tools: () => [
    defineTool({ name: "pid", description: "The server's process id", input: z.object({}), run: () => text(String(process.pid)) }),
    defineTool({
      name: "exit",
      description: "Exits the server process while the call is in flight",
      input: z.object({}),
      run: () =>
        new Promise<CallToolResult>(() => {
          setTimeout(() => process.exit(7), 50)
        })
    }),
    defineTool({
      name: "sleep",
      description: "Answers after ms milliseconds, or stops when cancelled",
      input: z.object({ ms: z.int().min(0) }),
      run: async ({ ms }, context) => {
        stats.sleeps++
        const outcome = await pause(ms, context)
        if (outcome === "cancelled") stats.cancelled++
        return text(`slept ${ms} ms`)
      }
    }),
    defineTool({
      name: "slow_first",
      description: "Slow (ms milliseconds) on its first `times` calls, then fast",
      input: z.object({ ms: z.int().min(0), times: z.int().min(0) }),
      run: async ({ ms, times }, context) => {
        stats.slowFirst++
        if (stats.slowFirst <= times && (await pause(ms, context)) === "cancelled") stats.cancelled++
        return text(`answered call ${stats.slowFirst}`)
      }
    }),
    defineTool({
      name: "stats",
      description: "Calls of sleep and slow_first, and how many were cancelled",
      input: z.object({}),
      run: () => text(JSON.stringify(stats))
    })
  ]
}

const starts = value("--starts")
if (starts !== undefined) {
  const before = existsSync(starts)
    ? readFileSync(starts, "utf8")
        .split("\n")
        .filter((l) => l !== "").length
    : 0
  if (before >= (number("--max-starts") ?? Infinity)) {
    process.stderr.write(`[bin-for-tests] refusing to start again (started ${before} times)\n`)
    process.exit(3)
  }
  appendFileSync(starts, `${process.pid}\n`)
}

const http = value("--http")
const store = value("--store")
const maxFuel = number("--max-fuel")
const timeoutMs = number("--timeout-ms")
const maxMessageBytes = number("--max-message-bytes")
if (args.includes("--print-stdout")) setTimeout(() => console.log("a stray console.log"), 50)

try {
  await mcpCommand({
    ...(http !== undefined ? { http } : {}),
    ...(store !== undefined ? { store } : {}),
    ...(maxFuel !== undefined ? { maxFuel } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(maxMessageBytes !== undefined ? { maxMessageBytes } : {}),
    ...(args.includes("--allow-double") ? { allow: { tools: ["double"] }, answerOracle: double } : {}),
    ...(args.includes("--fault-tools") ? { modules: [faultTools] } : {})
  })
  process.stderr.write("[bin-for-tests] server closed\n")
} catch (error) {
  process.stderr.write(`[bin-for-tests] ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
}
