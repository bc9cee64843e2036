/**
 * lambdagent: build, check and run LLM agents as terms of a small JSON lambda calculus.
 *
 * @since 0.1.0
 * @module
 */
export * as LanguageModel from "./LanguageModel.ts"
export * as MemoryStore from "./MemoryStore.ts"
export * as Tools from "./Tools.ts"
export * as OpenAI from "./providers/OpenAI.ts"
export * as Anthropic from "./providers/Anthropic.ts"
export * as ClaudeCode from "./providers/ClaudeCode.ts"
export * as Scripted from "./providers/Scripted.ts"
export * as Providers from "./providers/resolve.ts"
