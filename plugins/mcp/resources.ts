/**
 * Resources and prompts of the lambda server: each evolved tool's source
 * (`lambda://tools/{name}`, and `lambda://tools/{name}/versions/{version}` for any version), the
 * language reference (`lambda://reference`), and the `lambda-tutor` prompt.
 *
 * @since 0.1.0
 * @module
 */
import { Term } from "lambdagent"
import type { PromptSpec, ResourceSpec, ResourceTemplateSpec, ServerModule } from "./module.ts"
import { languageReference, tutorPrompt } from "./reference.ts"
import type { RegisteredTool, ToolRegistry, ToolVersion } from "./registry.ts"

/**
 * The URI of an evolved tool's source resource.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { toolResourceUri } from "lambdagent/mcp"
 * toolResourceUri("square") // "lambda://tools/square"
 * toolResourceUri("square", 2) // "lambda://tools/square/versions/2"
 * ```
 */
export const toolResourceUri = (name: string, version?: number): string =>
  `lambda://tools/${encodeURIComponent(name)}${version === undefined ? "" : `/versions/${version}`}`

/**
 * The URI of the language reference resource.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { REFERENCE_URI } from "lambdagent/mcp"
 * console.log(REFERENCE_URI) // "lambda://reference"
 * ```
 */
export const REFERENCE_URI = "lambda://reference"

/**
 * The JSON document of one version of a tool, as its resource holds it.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { ToolRegistry, toolDocument } from "lambdagent/mcp"
 * const registry = await ToolRegistry.open()
 * const tool = registry.get("square")
 * if (tool) toolDocument(tool, tool.current)
 * ```
 */
export const toolDocument = (tool: RegisteredTool, version: ToolVersion): string =>
  Term.stringify({
    name: tool.name,
    version: version.version,
    current: version === tool.current,
    description: version.description,
    createdAt: version.createdAt,
    code: version.code,
    versions: tool.versions.map((v) => v.version),
    ...(version.problem !== undefined ? { problem: version.problem } : {})
  })

/**
 * The resources-and-prompts part of the lambda server, as a {@link ServerModule}. The resource
 * list changes (and is announced) whenever a tool is evolved.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { lambdaResourcesModule, ToolRegistry } from "lambdagent/mcp"
 * const module = lambdaResourcesModule(await ToolRegistry.open())
 * console.log(module.resources!().map((r) => r.uri)) // ["lambda://reference"]
 * ```
 */
export const lambdaResourcesModule = (registry: ToolRegistry): ServerModule => {
  const reference: ResourceSpec = {
    uri: REFERENCE_URI,
    name: "reference",
    title: "JSON lambda calculus reference",
    description: "Every form of the term language, the server's tools, continuations and worked examples.",
    mimeType: "text/markdown",
    read: languageReference
  }
  const toolResource = (tool: RegisteredTool): ResourceSpec => ({
    uri: toolResourceUri(tool.name),
    name: `tool ${tool.name}`,
    title: tool.name,
    description: `Source of ${tool.name} (version ${tool.current.version}): ${tool.current.description}`,
    mimeType: "application/json",
    read: () => toolDocument(tool, tool.current)
  })
  const templates: ReadonlyArray<ResourceTemplateSpec> = [
    {
      uriTemplate: "lambda://tools/{name}",
      name: "tool source",
      description: "The current source of an evolved tool: {name, version, description, code, versions, …}.",
      mimeType: "application/json",
      read: ({ name }) => {
        const tool = name === undefined ? undefined : registry.get(name)
        return tool === undefined ? undefined : toolDocument(tool, tool.current)
      }
    },
    {
      uriTemplate: "lambda://tools/{name}/versions/{version}",
      name: "tool version source",
      description: "One version of an evolved tool.",
      mimeType: "application/json",
      read: ({ name, version }) => {
        const tool = name === undefined ? undefined : registry.get(name)
        const v = tool?.versions.find((x) => String(x.version) === version)
        return tool === undefined || v === undefined ? undefined : toolDocument(tool, v)
      }
    }
  ]
  const tutor: PromptSpec = {
    name: "lambda-tutor",
    title: "Learn the JSON lambda calculus",
    description: "Teaches the term language and this server's tools (evolve, run, continuations), then states your goal.",
    arguments: [{ name: "goal", description: "What you want to build (optional).", required: false }],
    get: (args) => ({
      description: "The JSON lambda calculus and how to evolve tools with it",
      messages: [{ role: "user", content: { type: "text", text: tutorPrompt(args.goal) } }]
    })
  }
  return {
    name: "lambda-resources",
    resources: () => [reference, ...registry.list().map(toolResource)],
    resourceTemplates: () => templates,
    prompts: () => [tutor],
    subscribe: (onChange) => registry.subscribe(() => onChange({ resources: true }))
  }
}
