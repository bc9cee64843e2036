/**
 * Conformance kits: vitest suites that any `LanguageModel` or `MemoryStore` implementation can
 * run to prove it behaves as the runtime expects. Import from `lambdagent/testing` (vitest is a
 * peer dependency of this entry only).
 *
 * @since 0.1.0
 * @module lambdagent/testing
 */
import { exitOnUnsupportedNode } from "../NodeVersion.ts"

exitOnUnsupportedNode()

export * from "./LanguageModelKit.ts"
export * from "./MemoryStoreKit.ts"
export * from "./ReplayKit.ts"
