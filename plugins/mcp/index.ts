/**
 * `lambdagent/mcp`: the JSON lambda calculus over the Model Context Protocol.
 *
 * - A tool-evolving MCP server ({@link createLambdaServer}, {@link serve}, {@link mcpCommand}):
 *   `evolve`, `run`, `list`, `help`, one MCP tool per evolved tool, persistent versioned tools,
 *   `lambda://` resources and a tutor prompt, over stdio or Streamable HTTP.
 * - A client ({@link mcpTools}, {@link discover}) that turns other MCP servers' tools into agent tools.
 *
 * @since 0.1.0
 * @module lambdagent/mcp
 */
export * from "./analysis.ts"
export * from "./client.ts"
export * from "./execute.ts"
export * from "./module.ts"
export * from "./reference.ts"
export * from "./registry.ts"
export * from "./resources.ts"
export * from "./results.ts"
export * from "./server.ts"
export * from "./store.ts"
export * from "./tools.ts"
export * from "./transports.ts"
export * from "./agent.ts"
