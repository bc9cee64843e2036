/**
 * Starts the lambda MCP server the way `lambdagent mcp` does, for the tests:
 * `node --import tsx plugins/mcp/bin-for-tests.ts [--http PORT] [--store PATH] [--max-fuel N]
 * [--timeout-ms N] [--max-message-bytes N] [--allow-double]`. With `--allow-double`, terms may call the host tool `double`,
 * answered by an oracle that doubles its (integer) input. `--print-stdout` writes a line with
 * `console.log` after start-up (to show that it lands on standard error).
 */
import { type AnswerOracle, mcpCommand } from "./index.ts"

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
    ...(args.includes("--allow-double") ? { allow: { tools: ["double"] }, answerOracle: double } : {})
  })
  process.stderr.write("[bin-for-tests] server closed\n")
} catch (error) {
  process.stderr.write(`[bin-for-tests] ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
}
