/**
 * The command line's offline fallback: which of a config's providers cannot answer here (a key
 * not set, a binary not installed, no Ollama server listening), and the scripted model that takes
 * their calls: the config's recorded demo plan (`demo:`) when the run's input is the one it was
 * recorded for, else the model that echoes its input. Stderr says which, and how to get a real
 * model, in one line per provider.
 */
import { existsSync } from "node:fs"
import { connect } from "node:net"
import { basename } from "node:path"
import { type LanguageModel, OpenAI, Providers, Scripted } from "lambdagent"
import type { LoadedAgent } from "./agent.ts"

/** How long to wait for a local model server (Ollama) to accept a connection. */
const PROBE_TIMEOUT_MS = 500

/** Whether something accepts TCP connections at the host and port of `url`. */
const listening = (url: URL): Promise<boolean> =>
  new Promise((resolve) => {
    const port = Number(url.port !== "" ? url.port : url.protocol === "https:" ? 443 : 80)
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ""), port })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false))
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
  })

/** The URL the config's Ollama calls go to. */
const ollamaUrl = (agent: LoadedAgent): URL => {
  const model = agent.compiled?.config.model
  return new URL(model?.provider === "ollama" && model.baseUrl !== undefined ? model.baseUrl : OpenAI.presets.ollama.baseUrl)
}

/** Why a provider cannot answer here, and what would let it. */
export interface Unreachable {
  readonly why: string
  readonly fix: string
}

/** Why `provider` cannot answer here, or `undefined` when it (probably) can. */
export const unreachable = async (provider: string, agent: LoadedAgent): Promise<Unreachable | undefined> => {
  const variable = Providers.missingKey(provider)
  if (variable !== undefined) return { why: `no ${variable} is set`, fix: `export ${variable}=…` }
  if (provider === "claude-code" || provider === "claude-code+session") {
    const bin = process.env.LAMBDAGENT_CLAUDE_BIN ?? "claude"
    const found = bin.includes("/") ? existsSync(bin) : (process.env.PATH ?? "").split(":").some((dir) => existsSync(`${dir}/${bin}`))
    if (!found) return { why: `the ${bin} binary is not installed`, fix: "install Claude Code" }
  }
  if (provider === "ollama") {
    const url = ollamaUrl(agent)
    if (!(await listening(url))) return { why: `no Ollama server is listening at ${url.host}`, fix: "start one (ollama serve)" }
  }
  return undefined
}

/** The model that answers for the unreachable providers, and what to tell the user. */
export interface OfflineModel {
  readonly model: LanguageModel.LanguageModelShape
  /** Whether it follows the config's demo plan (a run then shows its steps). */
  readonly demo: boolean
  readonly notices: ReadonlyArray<string>
}

const normalise = (text: string) => text.trim().replace(/\s+/g, " ").toLowerCase()

/**
 * The offline model for a run of `agent` on `input` (`undefined` outside `lambdagent run`: the
 * REPL and servers answer many inputs, so they always echo), with one notice per unreachable
 * provider.
 */
export const offlineModel = (agent: LoadedAgent, missing: ReadonlyMap<string, Unreachable>, input: string | undefined): OfflineModel => {
  const recorded = agent.compiled?.config.demo
  const file = basename(agent.file)
  const demo = recorded !== undefined && input !== undefined && normalise(recorded.input) === normalise(input)
  const described = demo
    ? `running on the scripted demo model: it follows the plan recorded in ${file} (demo:) and the tools run for real`
    : `running on the offline scripted model, which echoes its input${recorded === undefined ? "" : ` (the demo plan of ${file} is for ${JSON.stringify(recorded.input)})`}`
  const notices = [...missing].map(
    ([provider, { fix, why }]) => `[${provider}: ${why}; ${described}. For a real model: ${fix}, or pass --model provider:name.]`
  )
  return {
    model: demo ? Scripted.plan(recorded!.plan, { name: "demo", model: "demo" }) : Providers.fromSpec("scripted:echo"),
    demo,
    notices
  }
}
