/**
 * `lambdagent repl <config> [--model M] [--temperature T] [--tool NAME=CMD]… [--session ID]`: an
 * interactive loop where every line is one application of the agent, `(agent xₙ)[Γₙ₋₁] → (rₙ, Γₙ)`,
 * in one session, so memory and conversation carry from turn to turn. Lines starting with `:` are
 * commands (`:help` lists them).
 */
import { writeFile } from "node:fs/promises"
import { createInterface } from "node:readline"
import { type Host, noPlugins, pluginTools } from "./plugins.ts"
import type { Registration } from "./shell.ts"
import { MemoryStore, type Runtime, Term, type Trace, Value } from "lambdagent"
import { buildRuntime, type LoadedAgent, loadAgent, shellTools } from "./agent.ts"
import { parseSandboxFlag, SANDBOX_FLAGS, SANDBOX_HELP } from "./sandbox.ts"
import { CliError, describeError, ExitCode, onInterrupt, reportError } from "./io.ts"
import { temperature as temperatureOption, usageError } from "./options.ts"
import { callTool, formatToolTable, listTools, toolOutputText } from "./tools.ts"
import { eventLabel, formatEventDetail, formatEventLine, summaryLine } from "./trace.ts"

/** The options of `lambdagent repl`, as commander parses them. */
export interface ReplOptions {
  readonly model?: string
  readonly temperature?: number
  readonly tool: Array<string>
  readonly session: string
  readonly sandbox?: string
}

/** The commands, as `:help` lists them. */
export const replCommands: ReadonlyArray<readonly [string, string]> = [
  [":help", "this list"],
  [":quit, :q, :exit", "leave (Ctrl+D too)"],
  [":trace [N]", "the steps of the last turn, or step N in detail"],
  [":memory [clear]", "the session's memory entries, or forget them (and the conversation)"],
  [":lambda", "the agent as a lambda expression"],
  [":lint", "lint the config again"],
  [":reload", "re-read the config (keeps the session and its memory)"],
  [":model [M]", "show the model, or send every LLM call to M (e.g. openai:gpt-4o-mini, scripted:echo)"],
  [":temp T", "set the temperature of every LLM call"],
  [":tools", "the tools the agent can use"],
  [':tool NAME "input"', "call one tool by hand"],
  [":export FILE", "save the session (inputs, results, traces, stats) as JSON"],
  [":stats", "turns, β-reductions, calls, tokens and time of the session"]
]

const helpText = (): string => {
  const width = Math.max(...replCommands.map(([c]) => c.length))
  return [
    ...replCommands.map(([c, what]) => `  ${c.padEnd(width)}  ${what}`),
    "",
    "Any other line is an input to the agent (start it with :: to send a line beginning with :).",
    "Ctrl+C cancels the running turn; at the prompt it clears the line. Ctrl+D exits."
  ].join("\n")
}

const short = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? flat.slice(0, max) + "…" : flat
}

/** One step of a running turn: `[β[i] name 1.2s] output…`. */
export const stepLine = (event: Trace.TraceEvent, index: number): string => {
  const text = event.error !== undefined ? `error: ${event.error}` : (event.output ?? event.input ?? "")
  return `[β[${index}] ${eventLabel(event)} ${((event.durationMs ?? 0) / 1000).toFixed(1)}s]${text === "" ? "" : ` ${short(text, 72)}`}`
}

/** One finished (or failed) turn of a session. */
interface Turn {
  readonly at: string
  readonly input: string
  readonly result?: Term.Json
  readonly text?: string
  readonly error?: { readonly kind: string; readonly message: string }
  readonly trace: ReadonlyArray<Trace.TraceEvent>
  readonly stats?: Runtime.RunOutput["stats"]
}

/** The memory scopes the agent's `memory` nodes use, outermost first, without repeats. */
const memoryScopes = (term: Term.Term, session: string): Array<MemoryStore.MemoryScope> => {
  const scopes = new Map<string, MemoryStore.MemoryScope>()
  const stack = [term]
  while (stack.length > 0) {
    const t = stack.pop()!
    if (t._tag === "Memory") {
      const scope: MemoryStore.MemoryScope = t.scope === "global" ? { kind: "global" } : { kind: t.scope === "user" ? "user" : "session", id: session }
      scopes.set(MemoryStore.namespace(scope), scope)
    }
    stack.push(...Term.children(t))
  }
  return [...scopes.values()]
}

const age = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000))
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.round(s / 60)}m` : s < 86_400 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86_400)}d`
}

const entryLine = (entry: MemoryStore.MemoryEntry, index: number, now: number): string => {
  let exchange: unknown
  try {
    exchange = JSON.parse(entry.value)
  } catch {
    exchange = undefined
  }
  const body =
    typeof exchange === "object" && exchange !== null && "input" in exchange
      ? `user: ${short(String((exchange as { input: unknown }).input), 60)}  →  assistant: ${short(String((exchange as { output?: unknown }).output ?? ""), 60)}`
      : `${entry.key}: ${short(entry.value, 100)}`
  return `  [${index + 1}] ${age(now - entry.createdAt)} ago  ${body}`
}

/** `:tool NAME "input"`: the name and the input (a JSON string, a 'single-quoted' one, or the rest of the line). */
export const parseToolCall = (rest: string): { name: string; input: string } | undefined => {
  const match = /^(\S+)\s*([\s\S]*)$/.exec(rest.trim())
  if (match === null) return undefined
  const name = match[1]!
  const arg = match[2]!.trim()
  if (/^".*"$/s.test(arg)) {
    try {
      const parsed: unknown = JSON.parse(arg)
      if (typeof parsed === "string") return { name, input: parsed }
    } catch {
      // not JSON: drop the quotes below
    }
    return { name, input: arg.slice(1, -1) }
  }
  if (/^'.*'$/s.test(arg)) return { name, input: arg.slice(1, -1) }
  return { name, input: arg }
}

/** Run the REPL until `:quit` or the end of the input. */
export const replCommand = async (config: string, options: ReplOptions, version: string, host: Host = noPlugins): Promise<void> => {
  let temperature = options.temperature
  let model = options.model
  const session = options.session
  // one local store for every runtime of the session, so rebuilding (:model, :temp, :reload) keeps memory
  const localStore = MemoryStore.makeLocal()
  const out = (text: string) => void process.stdout.write(text + "\n")
  const warn = (text: string) => void process.stderr.write(text + "\n")

  const extraTools = [...shellTools(options.tool), ...pluginTools(host)]
  const sandbox = parseSandboxFlag(options.sandbox)
  const load = (t: number | undefined) => loadAgent(config, { ...(t !== undefined ? { temperature: t } : {}), tools: extraTools })
  // likewise one local shared memory, made when a config first asks for one
  let localSharedStore: MemoryStore.MemoryStoreShape | undefined
  const build = (agent: LoadedAgent, m: string | undefined) => {
    const sharedSize = agent.compiled?.sharedMemory?.size
    if (localSharedStore === undefined && sharedSize !== undefined) localSharedStore = MemoryStore.makeLocal({ maxEntries: 2 * sharedSize })
    return buildRuntime(agent, {
      ...(m !== undefined ? { model: m } : {}),
      extraTools,
      plugins: host.plugins,
      ...(sandbox !== undefined ? { sandbox } : {}),
      trace: "agent",
      ...(agent.compiled !== undefined ? { budgets: agent.compiled.budget } : {}),
      localStore,
      ...(localSharedStore !== undefined ? { localSharedStore } : {})
    })
  }

  let agent = await load(temperature)
  let choice = await build(agent, model)
  let notices = choice.notices
  for (const notice of notices) warn(notice)

  const turns: Array<Turn> = []
  let current: AbortController | undefined

  /** Swap in a new agent or model; on failure the old runtime stays. */
  const rebuild = async (next: { readonly temperature?: number | undefined; readonly model?: string | undefined; readonly reload?: boolean }) => {
    const nextTemperature = "temperature" in next ? next.temperature : temperature
    const nextModel = "model" in next ? next.model : model
    const nextAgent = next.reload === true || nextTemperature !== temperature ? await load(nextTemperature) : agent
    const nextChoice = await build(nextAgent, nextModel)
    const old = choice
    agent = nextAgent
    choice = nextChoice
    temperature = nextTemperature
    model = nextModel
    notices = nextChoice.notices
    for (const notice of notices) warn(notice)
    await old.close()
  }

  const banner = async () => {
    let shape = agent.type
    if (agent.compiled !== undefined) {
      const yaml = await import("lambdagent/yaml")
      const steps = yaml.description(agent.compiled).maxSteps
      if (steps.length > 0) shape += `, maxSteps=${steps.join("/")}`
    }
    const memory = memoryScopes(agent.term, session)
    if (memory.length > 0) shape += `, memory: ${memory.map(MemoryStore.namespace).join(", ")}`
    out(`lambdagent REPL v${version}`)
    out(`Agent: ${agent.name} (${shape})`)
    out(`Lambda: ${short(Term.pretty(agent.term), 160)}`)
    out("Type :help for commands, :quit to exit")
    out("")
  }

  const runTurn = async (input: string) => {
    const controller = new AbortController()
    current = controller
    onInterrupt(() => controller.abort(new CliError("interrupted", ExitCode.interrupted, "Interrupted")))
    const at = new Date().toISOString()
    const trace: Array<Trace.TraceEvent> = []
    try {
      let output: Runtime.RunOutput | undefined
      for await (const event of choice.runtime.stream(agent.term, input, { signal: controller.signal, session })) {
        if (event.type === "trace") {
          out(stepLine(event.event, trace.length))
          trace.push(event.event)
        } else if (event.type === "result") output = event.output
      }
      if (output === undefined) throw new CliError("the run ended without a result", ExitCode.failed, "NoResult")
      const text = Value.toText(output.value)
      const events = output.trace.length > 0 ? output.trace : trace
      turns.push({ at, input, result: output.result, text, trace: events, stats: output.stats })
      const s = output.stats
      out(`${trace.length > 0 ? "\n" : ""}Result: ${text}`)
      out(`(${events.length} β-reductions, ${(s.durationMs / 1000).toFixed(1)}s${s.tokens > 0 ? `, ~${s.tokens} tokens` : ""})`)
    } catch (error) {
      const described = controller.signal.aborted ? { kind: "Interrupted", message: "cancelled" } : describeError(error)
      turns.push({ at, input, error: { kind: described.kind, message: described.message }, trace })
      if (controller.signal.aborted) warn("[turn cancelled]")
      else reportError(error, "text")
    } finally {
      current = undefined
      onInterrupt(undefined)
    }
  }

  const showTrace = (arg: string) => {
    const last = turns.at(-1)
    if (last === undefined) return warn("no turn yet: :trace shows the steps of the last turn")
    if (arg !== "") {
      const n = Number(arg)
      const event = Number.isInteger(n) ? last.trace[n] : undefined
      if (event === undefined)
        return warn(
          `error: step ${arg} not found (the last turn has ${last.trace.length} step${last.trace.length === 1 ? "" : "s"}: 0…${last.trace.length - 1})`
        )
      return out(formatEventDetail(event, n))
    }
    last.trace.forEach((event, i) => out(formatEventLine(event, i)))
    out(`${"─".repeat(40)}\n${summaryLine(last.trace)}`)
  }

  const showMemory = async (arg: string) => {
    const scopes = memoryScopes(agent.term, session)
    if (arg === "clear") {
      for (const scope of scopes) await choice.runtime.memory(scope).clear()
      choice.runtime.resetConversation(session)
      return out(`[memory cleared${scopes.length > 0 ? `: ${scopes.map(MemoryStore.namespace).join(", ")}` : ""}; conversation history reset]`)
    }
    if (arg !== "") return warn(`error: :memory takes no argument but clear, got ${JSON.stringify(arg)}`)
    if (scopes.length === 0) return out("(this agent keeps no memory; give its config memory: {enabled: true})")
    const now = Date.now()
    for (const scope of scopes) {
      const view = choice.runtime.memory(scope)
      const entries = await view.list(100)
      out(`Memory ${view.namespace}: ${entries.length} entr${entries.length === 1 ? "y" : "ies"}${entries.length > 0 ? " (newest first)" : ""}`)
      entries.forEach((entry, i) => out(entryLine(entry, i, now)))
    }
  }

  const showStats = () => {
    const done = turns.filter((t) => t.stats !== undefined)
    const sum = (f: (s: NonNullable<Turn["stats"]>) => number) => done.reduce((n, t) => n + f(t.stats!), 0)
    const steps = turns.reduce((n, t) => n + t.trace.length, 0)
    const tokens = sum((s) => s.tokens)
    out(`Session ${session}: ${turns.length} turn${turns.length === 1 ? "" : "s"} (${turns.length - done.length} failed)`)
    out(`  β-reductions: ${steps}`)
    out(`  LLM calls: ${sum((s) => s.llmCalls)}, tool calls: ${sum((s) => s.toolCalls)}`)
    out(`  tokens: ${tokens > 0 ? `~${tokens}` : "0"}`)
    out(`  time: ${(sum((s) => s.durationMs) / 1000).toFixed(1)}s`)
  }

  const callOneTool = async (rest: string) => {
    const call = parseToolCall(rest)
    if (call === undefined) return warn('usage: :tool NAME "input"')
    const controller = new AbortController()
    current = controller
    onInterrupt(() => controller.abort())
    try {
      out(toolOutputText(await callTool(agent, choice.runtime.tools, call.name, call.input, controller.signal)))
    } finally {
      current = undefined
      onInterrupt(undefined)
    }
  }

  const exportSession = async (file: string) => {
    if (file === "") return warn("usage: :export FILE")
    const record = {
      agent: { name: agent.name, type: agent.type, file: agent.file },
      session,
      ...(model !== undefined ? { model } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      exportedAt: new Date().toISOString(),
      turns
    }
    await writeFile(file, JSON.stringify(record, null, 2) + "\n")
    out(`[exported ${turns.length} turn${turns.length === 1 ? "" : "s"} to ${file}]`)
  }

  /** One line: a command or an input. `false` ends the REPL. */
  const handle = async (line: string): Promise<boolean> => {
    const trimmed = line.trim()
    if (trimmed === "") return true
    if (!trimmed.startsWith(":") || trimmed.startsWith("::")) {
      await runTurn(trimmed.startsWith("::") ? trimmed.slice(1) : trimmed)
      out("")
      return true
    }
    const space = trimmed.search(/\s/)
    const command = (space < 0 ? trimmed : trimmed.slice(0, space)).toLowerCase()
    const rest = space < 0 ? "" : trimmed.slice(space + 1).trim()
    try {
      switch (command) {
        case ":quit":
        case ":q":
        case ":exit":
          return false
        case ":help":
        case ":h":
        case ":?":
          out(helpText())
          break
        case ":trace":
          showTrace(rest)
          break
        case ":memory":
          await showMemory(rest)
          break
        case ":lambda":
          if (agent.compiled !== undefined) out((await import("lambdagent/yaml")).toLambdaExpr(agent.compiled))
          else out(`${agent.name} = ${Term.pretty(agent.term)}`)
          break
        case ":lint": {
          if (agent.compiled === undefined) throw usageError(":lint works on YAML configs")
          const result = (await import("lambdagent/yaml")).lintCommand(agent.file)
          process.stdout.write(result.stdout)
          process.stderr.write(result.stderr)
          break
        }
        case ":reload":
          await rebuild({ reload: true })
          out(`[reloaded ${agent.file}: ${agent.name} (${agent.type})]`)
          break
        case ":model":
          if (rest === "") {
            out(
              model !== undefined
                ? `model: ${model}`
                : `model: as the config says${agent.compiled !== undefined && agent.compiled.providers.length > 0 ? ` (${agent.compiled.providers.join(", ")})` : ""}`
            )
            for (const notice of notices) out(notice)
          } else {
            await rebuild({ model: rest }).catch((error: unknown) => {
              throw error instanceof CliError ? new CliError(error.message.replace(/^--model /, ":model "), error.exitCode, error.kind) : error
            })
            out(`[model: ${rest}]`)
          }
          break
        case ":temp":
        case ":temperature": {
          if (agent.compiled === undefined) throw usageError(":temp needs a YAML config (a term's JSON carries its own settings)")
          if (rest === "") {
            out(`temperature: ${temperature ?? "as the config says"}`)
            break
          }
          await rebuild({ temperature: temperatureOption(":temp")(rest) })
          out(`[temperature: ${temperature}]`)
          break
        }
        case ":tools":
          process.stdout.write(formatToolTable(agent.name, listTools(agent, choice.tools)))
          break
        case ":tool":
          await callOneTool(rest)
          break
        case ":export":
          await exportSession(rest)
          break
        case ":stats":
          showStats()
          break
        default:
          warn(`error: unknown command ${command} (type :help for the list)`)
      }
    } catch (error) {
      reportError(error, "text")
    }
    return true
  }

  const terminal = process.stdin.isTTY === true && process.stdout.isTTY === true
  const names = replCommands.flatMap(([c]) => c.split(/,\s*/).map((n) => n.split(" ")[0]!))
  const rl = createInterface({
    input: process.stdin,
    ...(terminal ? { output: process.stdout, prompt: "λ> ", historySize: 1000, removeHistoryDuplicates: true } : {}),
    terminal,
    ...(terminal ? { completer: (line: string): [Array<string>, string] => [line.startsWith(":") ? names.filter((n) => n.startsWith(line)) : [], line] } : {})
  })
  // Ctrl+C in the terminal (raw mode): cancel the running turn, else clear the line
  rl.on("SIGINT", () => {
    if (current !== undefined) {
      current.abort(new CliError("interrupted", ExitCode.interrupted, "Interrupted"))
      return
    }
    if (rl.line.length > 0) {
      rl.write(null, { ctrl: true, name: "e" })
      rl.write(null, { ctrl: true, name: "u" })
      // a dumb terminal has no editing keys: empty the line buffer directly
      if (rl.line.length > 0) Object.assign(rl, { line: "", cursor: 0 })
    } else process.stdout.write("\n(To exit, press Ctrl+D or type :quit)")
    process.stdout.write("\n")
    rl.prompt()
  })

  try {
    await banner()
    if (terminal) rl.prompt()
    for await (const line of rl) {
      if (!terminal) out(`λ> ${line}`)
      if (!(await handle(line))) break
      if (terminal) rl.prompt()
    }
    if (terminal) out("")
  } finally {
    rl.close()
    onInterrupt(undefined)
    await choice.close()
  }
}

const collect = (value: string, previous: Array<string>) => [...previous, value]

/** Register `lambdagent repl`. */
export const registerRepl: Registration = (program, run, host) => {
  program
    .command("repl")
    .description("talk to an agent: every line is a run in one session (memory and conversation carry over); :help lists the commands")
    .argument("<config>", "the agent: a .yml/.yaml config or a .json term")
    .option("--model <spec>", "send every LLM call to this model (provider:name, e.g. openai:gpt-4o-mini or scripted:echo)")
    .option("--temperature <t>", "override the temperature of every LLM call (0 to 2)", temperatureOption("--temperature"))
    .option("--tool <NAME=CMD>", "a shell command as a tool; {} stands for the input, passed as one argument (repeatable)", collect, [])
    .option(SANDBOX_FLAGS, SANDBOX_HELP)
    .option("--session <id>", "the session id: the namespace of session-scoped memory", "repl")
    .action(async (config: string, options: ReplOptions) =>
      run(
        () => replCommand(config, options, program.version() ?? "", host),
        () => "text"
      )
    )
}
