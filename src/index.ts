/**
 * lambdagent: build, check and run LLM agents as terms of a small JSON lambda calculus.
 *
 * @since 0.1.0
 * @module
 */
export * as LanguageModel from "./LanguageModel.ts"
export * as MemoryStore from "./MemoryStore.ts"
export * as SharedMemory from "./SharedMemory.ts"
export * as Tools from "./Tools.ts"
