import { DatabaseSync } from "node:sqlite"
import { rmSync } from "node:fs"
import * as S from "./plugins/sqlite/index.ts"
const path = process.argv[2]!
rmSync(path, { force: true }); rmSync(path + "-wal", { force: true }); rmSync(path + "-shm", { force: true })
const db = new DatabaseSync(path)
db.prepare("PRAGMA journal_mode = WAL").get(); db.exec("PRAGMA synchronous = NORMAL")
for (const p of process.argv.slice(3)) db.exec(p)
db.exec(S.schema)
const q = Object.fromEntries(Object.entries(S.sql).map(([k, v]) => [k, db.prepare(v)])) as any
const V = "x".repeat(200)
const t = (name: string, n: number, f: (i: number) => void) => { const s = performance.now(); for (let i = 0; i < n; i++) f(i); const us = (performance.now() - s) * 1000 / n; console.log(name.padEnd(20), us.toFixed(1), "us") }
t("upsert autocommit", 1000, (i) => q.upsert.run("ns", "k" + i, V, Date.now(), null))
const variants: Record<string, string> = {
  full: S.sql.listRecent,
  nocast: `SELECT key, value, created_at, expires_at FROM lambdagent_memory WHERE ns = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY seq DESC LIMIT ?`,
  nofilter: `SELECT CAST(key AS BLOB) AS key, CAST(value AS BLOB) AS value, created_at, expires_at FROM lambdagent_memory WHERE ns = ? AND ? IS NOT NULL ORDER BY seq DESC LIMIT ?`,
  idonly: `SELECT id FROM lambdagent_memory WHERE ns = ? AND ? IS NOT NULL ORDER BY seq DESC LIMIT ?`,
}
for (const [k, v] of Object.entries(variants)) { const st = db.prepare(v); t(k, 2000, () => st.all("ns", Date.now(), 20)) }
const one = db.prepare("SELECT 1"); t("select 1", 5000, () => one.get())
