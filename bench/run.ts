/**
 * `npm run bench [-- name…]`: every benchmark, or only the named ones, against the built package.
 */
const suites: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  core: () => import("./core.ts"),
  evaluator: () => import("./evaluator.ts"),
  agents: () => import("./agents.ts"),
  memory: () => import("./memory.ts"),
  rag: () => import("./rag.ts"),
  yaml: () => import("./yaml.ts"),
  cli: () => import("./cli.ts"),
  mcp: () => import("./mcp.ts"),
  evolve: () => import("./evolve.ts"),
  sandbox: () => import("./sandbox.ts"),
  a2a: () => import("./a2a.ts"),
  checkpoint: () => import("./checkpoint.ts"),
  replay: () => import("./replay.ts"),
  cluster: () => import("./cluster.ts")
}

const wanted = process.argv.slice(2)
for (const [name, load] of Object.entries(suites)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue
  console.log(`\n## ${name}`)
  await (await load()).run()
}
