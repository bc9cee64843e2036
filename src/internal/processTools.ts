/**
 * Tools that run a process through lambdagent's launcher register how to rebuild themselves under
 * a sandbox policy, so `Sandbox.wrap` can sandbox a tool it only knows as a `ToolDefinition`.
 */
import type { Policy } from "../Sandbox.ts"
import type { ToolDefinition } from "../Tools.ts"

const rebuilders = new WeakMap<ToolDefinition, (policy: Policy) => ToolDefinition>()

/** Remember how to rebuild `tool` under a policy; returns the tool. */
export const sandboxable = <T extends ToolDefinition>(tool: T, rebuild: (policy: Policy) => T): T => {
  rebuilders.set(tool, rebuild)
  return tool
}

/** How to rebuild a tool under a policy, when it runs its process through the launcher. */
export const rebuilderOf = (tool: ToolDefinition): ((policy: Policy) => ToolDefinition) | undefined => rebuilders.get(tool)
