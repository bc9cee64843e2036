/**
 * Test helpers for code built on lambdagent (`lambdagent/testing`). Needs `vitest`.
 *
 * @since 0.1.0
 * @module
 */
export * from "./MemoryStoreKit.ts"
