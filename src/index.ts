/**
 * lambdagent: build, check and run LLM agents as terms of a small JSON lambda calculus.
 *
 * @since 0.1.0
 * @module
 */
export * as Budget from "./Budget.ts"
export * as Errors from "./Errors.ts"
export * as Evaluator from "./Evaluator.ts"
export * as LanguageModel from "./LanguageModel.ts"
export * as MemoryStore from "./MemoryStore.ts"
export * as Term from "./Term.ts"
export * as Tools from "./Tools.ts"
export * as Trace from "./Trace.ts"
export * as Value from "./Value.ts"
