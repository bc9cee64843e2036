/**
 * Run a local Chroma server as a child process, with the `chroma` command that the `chromadb`
 * package ships, its data in a directory of your choice.
 *
 * Used by the CLI commands when the `chroma` backend has a `persistDirectory` but no server URL,
 * and by tests and benchmarks.
 *
 * @since 0.1.0
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as path from "node:path"
import { CheckpointStore } from "lambdagent"
import { heartbeat } from "./ChromaIndex.ts"
import { errorMessage, RagError } from "./RagError.ts"

/**
 * Options for {@link start}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ChromaServer } from "lambdagent/rag"
 * const o: ChromaServer.ChromaServerOptions = { path: ".rag/chroma", port: 8765 }
 * ```
 */
export interface ChromaServerOptions {
  /** Directory for the server's data (created if missing). */
  readonly path: string
  /** Default: a free port. */
  readonly port?: number
  /** Default `127.0.0.1`. */
  readonly host?: string
  /** Milliseconds to wait for the first heartbeat; default 30 000. */
  readonly startupTimeoutMs?: number
  /** Directory to resolve the `chromadb` package from; default the working directory, then this module's. */
  readonly resolveFrom?: string
}

/**
 * A running server.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { ChromaServer } from "lambdagent/rag"
 * await using server = await ChromaServer.start({ path: ".rag/chroma" })
 * console.log(server.url)
 * ```
 */
export interface RunningChromaServer {
  readonly url: string
  readonly port: number
  readonly pid: number
  /** Stop the server (SIGTERM, then SIGKILL after 5 s) and wait for it to exit. */
  readonly stop: () => Promise<void>
  /** The same as `stop`, for `await using`. */
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

/**
 * A TCP port that is free right now on `host`.
 *
 * @since 0.1.0
 * @category utils
 * @example
 * ```ts
 * import { ChromaServer } from "lambdagent/rag"
 * const port = await ChromaServer.freePort()
 * ```
 */
export const freePort = (host = "127.0.0.1"): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, host, () => {
      const address = server.address()
      server.close(() => {
        if (address !== null && typeof address === "object") resolve(address.port)
        else reject(new Error("no port"))
      })
    })
  })

/**
 * The path of the `chroma` command-line script of the installed `chromadb` package.
 *
 * @since 0.1.0
 * @category utils
 * @example
 * ```ts
 * import { ChromaServer } from "lambdagent/rag"
 * console.log(ChromaServer.cliPath()) // …/node_modules/chromadb/dist/cli.mjs
 * ```
 */
export const cliPath = (resolveFrom?: string): string => {
  const bases = [resolveFrom ?? process.cwd(), path.dirname(process.argv[1] ?? process.cwd())]
  for (const base of bases) {
    let entry: string
    try {
      entry = createRequire(path.join(path.resolve(base), "noop.js")).resolve("chromadb")
    } catch {
      continue
    }
    for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
      const manifest = path.join(dir, "package.json")
      if (!fs.existsSync(manifest)) continue
      const pkg = JSON.parse(fs.readFileSync(manifest, "utf8")) as { name?: string; bin?: string | Record<string, string> }
      if (pkg.name !== "chromadb") continue
      const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.["chroma"]
      if (bin !== undefined) return path.join(dir, bin)
    }
  }
  throw new RagError({
    reason: "MissingDependency",
    message: "running a local Chroma server needs the optional package `chromadb`: run `npm install chromadb`"
  })
}

const waitForExit = (child: ChildProcess, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(true)
    const timer = setTimeout(() => resolve(false), ms)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve(true)
    })
  })

/**
 * Start `chroma run --path <path> --host <host> --port <port>` and wait until it answers its
 * heartbeat. Fails with `MissingDependency` without `chromadb`, and with `BackendUnavailable`
 * (including the end of the server's output) when it exits early or stays silent past
 * `startupTimeoutMs`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { ChromaIndex, ChromaServer, Embeddings } from "lambdagent/rag"
 * const server = await ChromaServer.start({ path: ".rag/chroma" })
 * const index = ChromaIndex.make({ url: server.url, name: "docs", embeddings: Embeddings.hashing() })
 * // …
 * await server.stop()
 * ```
 */
export const start = async (options: ChromaServerOptions): Promise<RunningChromaServer> => {
  const script = cliPath(options.resolveFrom)
  const host = options.host ?? "127.0.0.1"
  const port = options.port ?? (await freePort(host))
  const startupTimeoutMs = options.startupTimeoutMs ?? 30_000
  try {
    CheckpointStore.makeDirectory(options.path)
  } catch (cause) {
    throw new RagError({
      reason: "InvalidConfig",
      message: `cannot create the Chroma data directory ${options.path}: ${errorMessage(cause)}`,
      path: options.path,
      cause
    })
  }
  const child = spawn(process.execPath, [script, "run", "--path", options.path, "--host", host, "--port", String(port)], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1" }
  })
  let output = ""
  const keep = (data: Buffer): void => {
    output = (output + data.toString("utf8")).slice(-4000)
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  let spawnError: unknown
  child.on("error", (e) => {
    spawnError = e
  })
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`

  // Never leave the server behind when this process exits without stopping it.
  const killOnExit = (): void => {
    child.kill("SIGKILL")
  }
  process.once("exit", killOnExit)

  const stop = async (): Promise<void> => {
    process.off("exit", killOnExit)
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    if (!(await waitForExit(child, 5_000))) {
      child.kill("SIGKILL")
      await waitForExit(child, 5_000)
    }
  }

  const deadline = Date.now() + startupTimeoutMs
  for (;;) {
    if (spawnError !== undefined || child.exitCode !== null || child.signalCode !== null) {
      await stop()
      // biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colour codes
      const colours = /\x1b\[[0-9;]*m/g
      const tail = output.replace(colours, "").trim().split("\n").slice(-8).join("\n")
      throw new RagError({
        reason: "BackendUnavailable",
        message: `the Chroma server exited before it was ready (${spawnError !== undefined ? errorMessage(spawnError) : `exit code ${child.exitCode ?? child.signalCode}`})${tail === "" ? "" : `:\n${tail}`}`,
        path: url
      })
    }
    try {
      await heartbeat(url, 1_000)
      break
    } catch {
      if (Date.now() > deadline) {
        await stop()
        throw new RagError({
          reason: "BackendUnavailable",
          message: `the Chroma server at ${url} did not answer within ${startupTimeoutMs} ms`,
          path: url
        })
      }
      await new Promise((r) => setTimeout(r, 150))
    }
  }
  return { url, port, pid: child.pid ?? -1, stop, [Symbol.asyncDispose]: stop }
}
