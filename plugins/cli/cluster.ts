/**
 * `lambdagent cluster runner|submit|status|result|cancel|list|answer`: durable runs on a cluster
 * of runner processes sharing PostgreSQL (see docs/cluster.md).
 */
import type { Command } from "commander"
import { Term } from "lambdagent"
import type { ClusterClient, ClusterOptions, RunStatus } from "lambdagent/cluster"
import { loadAgent, shellTools } from "./agent.ts"
import { CliError, ExitCode, onInterrupt } from "./io.ts"
import { collect } from "./mcp.ts"
import { integer, port, positive, textOrJson } from "./options.ts"
import type { Registration } from "./shell.ts"

export interface Connection {
  readonly pg?: string
  readonly prefix?: string
  readonly shards?: number
  readonly format: "text" | "json"
}

export const PG_HELP = "PostgreSQL URL (default LAMBDAGENT_PG_URL, else postgres://postgres@127.0.0.1:5432/postgres)"

const withConnection = (command: Command): Command =>
  command
    .option("--pg <url>", PG_HELP)
    .option("--prefix <prefix>", "prefix of the cluster's tables: one cluster per prefix (default lambdagent_cluster)")
    .option("--shards <n>", "shards the runs are spread over: the same for every process of a cluster (default 64)", integer("--shards", 1, 10_000))
    .option("--format <format>", "text (default) or json", textOrJson, "text")

export const optionsOf = (connection: Connection, extra: ClusterOptions = {}): ClusterOptions => ({
  ...(connection.pg !== undefined ? { pg: connection.pg } : {}),
  ...(connection.prefix !== undefined ? { prefix: connection.prefix } : {}),
  ...(connection.shards !== undefined ? { shards: connection.shards } : {}),
  ...extra
})

/** Join as a client, do `f`, leave. */
const asClient = async <A>(connection: Connection, f: (client: ClusterClient) => Promise<A>): Promise<A> => {
  const { connect, ClusterError } = await import("lambdagent/cluster")
  const client = await connect(optionsOf(connection, { role: "client" }))
  try {
    return await f(client)
  } catch (error) {
    // an unknown run id exits as every command's missing thing does
    if (error instanceof ClusterError && error.reason === "NotFound") throw new CliError(error.message, ExitCode.notFound, "ClusterError")
    throw error
  } finally {
    await client.close()
  }
}

const statusLine = (s: RunStatus): string => {
  const ended = s.finishedAt !== undefined ? `  ended ${s.finishedAt}` : ""
  const asks = s.question !== undefined ? `  asks ${JSON.stringify(s.question.question)}` : ""
  const error = s.error !== undefined ? `  ${s.error.kind}: ${s.error.message}` : ""
  const runner = s.runner !== undefined && !["done", "failed", "cancelled"].includes(s.state) ? `  on ${s.runner}` : ""
  return `${s.id}  ${s.state}${runner}  submitted ${s.submittedAt}${ended}${asks}${error}`
}

const print = (format: "text" | "json", json: unknown, text: string) => process.stdout.write(format === "json" ? `${JSON.stringify(json)}\n` : `${text}\n`)

/** A run's result: its value as text (a string as is), or its error; a failed or cancelled run exits 1. */
const printResult = (format: "text" | "json", s: RunStatus) => {
  if (format === "json") print(format, s, "")
  else if (s.state === "done") {
    const result = s.outcome?.result
    process.stdout.write(`${typeof result === "string" ? result : JSON.stringify(result)}\n`)
  } else process.stdout.write(`${statusLine(s)}\n`)
  if (s.state === "failed" || s.state === "cancelled") process.exitCode = ExitCode.failed
}

interface RunnerOptions extends Connection {
  readonly host: string
  readonly port: number
  readonly single?: boolean
  readonly model?: string
  readonly tool: Array<string>
}

const startRunner = async (options: RunnerOptions): Promise<void> => {
  const { connect } = await import("lambdagent/cluster")
  const role = options.single === true ? "single" : "runner"
  const client = await connect(
    optionsOf(options, {
      role,
      host: options.host,
      port: options.port,
      ...(options.model !== undefined ? { model: options.model } : {}),
      tools: shellTools(options.tool)
    })
  )
  const where = role === "single" ? "single process" : `${options.host}:${options.port}`
  print(options.format, { ready: true, role, address: where }, `lambdagent cluster runner ready (${where}, prefix ${options.prefix ?? "lambdagent_cluster"})`)
  // runs until Ctrl+C or SIGTERM: then it leaves the cluster, and its runs move to the others
  await new Promise<void>((resolve) => {
    const stop = () => resolve()
    onInterrupt(stop)
    process.once("SIGTERM", stop)
  })
  await client.close()
}

export const registerCluster: Registration = (program, run) => {
  const cluster = program.command("cluster").description("durable runs on runner processes sharing PostgreSQL (see docs/cluster.md)")
  withConnection(
    cluster
      .command("runner")
      .description("start a runner: it runs its share of the cluster's runs until stopped (Ctrl+C, SIGTERM)")
      .option("--host <host>", "address the other runners reach this one at (default 127.0.0.1)", "127.0.0.1")
      .option("--port <port>", "port this runner listens on for the others (default 34431)", port("--port"), 34431)
      .option("--single", "run every shard in this process, with no other runner (development)")
      .option("--model <spec>", "the model of runs that name none (default scripted:echo)")
      .option("--tool <name=command>", "a shell tool the runs may call (repeatable)", collect, [])
  ).action(async (options: RunnerOptions) =>
    run(
      () => startRunner(options),
      () => options.format
    )
  )
  withConnection(
    cluster
      .command("submit")
      .description("submit a run of an agent config (YAML or a JSON term) on an input; prints its id")
      .argument("<config>", "agent file (.yml/.yaml config or .json term)")
      .argument("[input]", "the input (default empty)")
      .option("--id <id>", "the run's id: submitting the same id again gives the same one run (default a new id)")
      .option("--model <spec>", "the run's default model (default the runner's)")
  ).action(async (config: string, input: string | undefined, options: Connection & { id?: string; model?: string }) =>
    run(
      async () => {
        const agent = await loadAgent(config)
        const budget = agent.compiled?.budget
        const submitted = await asClient(options, (client) =>
          client.submit(Term.encode(agent.term), input ?? "", {
            ...(options.id !== undefined ? { id: options.id } : {}),
            ...(options.model !== undefined ? { model: options.model } : {}),
            ...(budget !== undefined && Object.keys(budget).length > 0 ? { budget } : {})
          })
        )
        print(options.format, submitted, submitted.created ? submitted.id : `${submitted.id} (submitted before: the same run)`)
      },
      () => options.format
    )
  )
  // a run's status line after asking the cluster something of it
  const showStatus = (options: Connection, ask: (client: ClusterClient) => Promise<RunStatus>) =>
    run(
      async () => {
        const s = await asClient(options, ask)
        print(options.format, s, statusLine(s))
      },
      () => options.format
    )
  withConnection(cluster.command("status").description("where a run is").argument("<id>", "the run's id")).action(async (id: string, options: Connection) =>
    showStatus(options, (client) => client.status(id))
  )
  withConnection(
    cluster
      .command("result")
      .description("a run's result (its status while it runs); --wait until it ends")
      .argument("<id>", "the run's id")
      .option("--wait", "wait until the run ends")
      .option("--timeout <seconds>", "with --wait: give up after this long (exit 1)", positive("--timeout"))
  ).action(async (id: string, options: Connection & { wait?: boolean; timeout?: number }) =>
    run(
      async () => {
        const s = await asClient(options, (client) =>
          client.result(id, { wait: options.wait === true, ...(options.timeout !== undefined ? { timeoutMs: options.timeout * 1000 } : {}) })
        )
        printResult(options.format, s)
      },
      () => options.format
    )
  )
  withConnection(cluster.command("cancel").description("cancel a run that has not ended").argument("<id>", "the run's id")).action(
    async (id: string, options: Connection) => showStatus(options, (client) => client.cancel(id))
  )
  withConnection(
    cluster
      .command("list")
      .description("the most recently submitted runs, newest first")
      .option("--limit <n>", "how many (default 100)", integer("--limit", 1, 100_000), 100)
  ).action(async (options: Connection & { limit: number }) =>
    run(
      async () => {
        const runs = await asClient(options, (client) => client.list({ limit: options.limit }))
        print(options.format, runs, runs.length === 0 ? "no runs" : runs.map(statusLine).join("\n"))
      },
      () => options.format
    )
  )
  withConnection(
    cluster.command("answer").description("answer the question a waiting run asks").argument("<id>", "the run's id").argument("<answer>", "the answer (text)")
  ).action(async (id: string, answer: string, options: Connection) =>
    run(
      async () => {
        await asClient(options, (client) => client.answer(id, answer))
        print(options.format, { id, answered: true }, `${id} answered`)
      },
      () => options.format
    )
  )
}
