/**
 * lambdagent: build, check and run LLM agents as terms of a small JSON lambda calculus.
 *
 * @since 0.1.0
 * @module lambdagent
 */
import { exitOnUnsupportedNode } from "./NodeVersion.ts"

exitOnUnsupportedNode()

export * as Agent from "./Agent.ts"
export * as Analysis from "./Analysis.ts"
export * as Anthropic from "./providers/Anthropic.ts"
export * as Budget from "./Budget.ts"
export * as Checkpoint from "./Checkpoint.ts"
export * as CheckpointStore from "./CheckpointStore.ts"
export * as ClaudeCode from "./providers/ClaudeCode.ts"
export * as CliAgent from "./CliAgent.ts"
export * as Driver from "./Driver.ts"
export * as Errors from "./Errors.ts"
export * as Evaluator from "./Evaluator.ts"
export * as HostGuard from "./HostGuard.ts"
export * as LanguageModel from "./LanguageModel.ts"
export * as MemoryStore from "./MemoryStore.ts"
export * as NodeVersion from "./NodeVersion.ts"
export * as Ollama from "./providers/Ollama.ts"
export * as OpenAI from "./providers/OpenAI.ts"
export * as Oracle from "./Oracle.ts"
export * as Plugin from "./Plugin.ts"
export * as Providers from "./providers/resolve.ts"
export * as Replay from "./Replay.ts"
export * as Runtime from "./Runtime.ts"
export * as Sandbox from "./Sandbox.ts"
export * as Scripted from "./providers/Scripted.ts"
export * as SharedMemory from "./SharedMemory.ts"
export * as ShellTool from "./ShellTool.ts"
export * as Telemetry from "./Telemetry.ts"
export * as Term from "./Term.ts"
export * as Tools from "./Tools.ts"
export * as Trace from "./Trace.ts"
export * as TraceSink from "./TraceSink.ts"
export * as Value from "./Value.ts"
export { createRuntime } from "./Runtime.ts"
