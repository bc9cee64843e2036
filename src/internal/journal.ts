/**
 * A run's live oracle answers passed through a journal (`Agent.RunOptions.journal`): each call is
 * handed over as an effect that makes it and yields its recording entry; the journal runs it, or
 * gives back the entry it kept from an earlier execution of the same run. An answer given back
 * adds its events and tokens to the run as a replayed one does, so the trace and the budgets are
 * those of the whole run, and so is the time budget: an entry keeps the time the run had used when
 * its call was answered.
 */
import * as Effect from "effect/Effect"
import * as Driver from "../Driver.ts"
import { ReplayError } from "../Errors.ts"
import * as Oracle from "../Oracle.ts"
import * as Replay from "../Replay.ts"
import type * as Trace from "../Trace.ts"
import * as Value from "../Value.ts"

/** Runs one oracle call (`call`, keyed `key` in the run), or answers it from what it kept. */
export type Journal<E> = (key: string, request: Oracle.Request, call: Effect.Effect<Replay.Entry, E>) => Effect.Effect<Replay.Entry, E>

type Journaled = Extract<Oracle.Request, { readonly kind: "llm" | "tool" | "tools" | "memory-read" | "memory-write" | "ask" }>

const entryOf = (key: string, request: Journaled, value: Value.Value, events: ReadonlyArray<Trace.TraceEvent>): Replay.Entry => {
  let tokens = 0
  for (const event of events) if (event.tokens !== undefined) tokens += event.tokens.input + event.tokens.output
  return {
    key,
    kind: request.kind,
    request: Replay.requestOf(request),
    answer: request.kind === "memory-write" ? null : Value.toJson(value),
    tokens,
    events: [...events]
  }
}

const valueOf = (request: Journaled, entry: Replay.Entry): Value.Value => (request.kind === "memory-write" ? request.output : Replay.entryValue(entry))

/**
 * `handlers` with every call that reaches the services (model, tools, memory, a person) passed
 * through `journal`. `onReplayed` is told of each answer the journal gave back without making
 * the call (an LLM answer joins its conversation's history there).
 */
export const journaled = <E>(
  handlers: Driver.Handlers<E, never>,
  journal: Journal<E>,
  onReplayed: (request: Oracle.Request, answer: Value.Value) => void
): Driver.Handlers<E | ReplayError, never> => {
  const through = (
    request: Journaled,
    run: Driver.RunState,
    answer: (run: Driver.RunState) => Effect.Effect<unknown, E>
  ): Effect.Effect<Value.Value, E | ReplayError> => {
    const exec = run.execution
    const key = exec.requestKey(request)
    // the events of the call made here; none when the journal gave its entry back
    let live: Array<Trace.TraceEvent> | undefined
    const call = Effect.suspend(() => {
      const events: Array<Trace.TraceEvent> = (live = [])
      return Effect.map(answer({ ...run, execution: exec.recordingInto(events) }), (output) => ({
        ...entryOf(key, request, Oracle.toValue(output), events),
        elapsedMs: exec.elapsedMs
      }))
    })
    return Effect.flatMap(journal(key, request, call), (entry) => {
      let value: Value.Value
      try {
        value = valueOf(request, entry)
      } catch (error) {
        if (error instanceof ReplayError) return Effect.fail(error)
        throw error
      }
      if (live !== undefined) {
        // told to the run's listener as they happened; only the run's list misses them
        exec.events.push(...live)
      } else {
        onReplayed(request, value)
        Driver.answerRecorded(exec, { value, events: entry.events as ReadonlyArray<Trace.TraceEvent>, tokens: entry.tokens })
        // the time the run had used when the call was answered counts in this execution too
        if (entry.elapsedMs !== undefined) exec.restoreElapsed(entry.elapsedMs)
      }
      return Effect.succeed(value)
    })
  }
  const ask = handlers.ask
  return {
    ...handlers,
    llm: (request, run) => through(request, run, (run) => handlers.llm(request, run)),
    tool: (request, run) => through(request, run, (run) => handlers.tool(request, run)),
    // one turn's calls are one entry, as a recording keeps them: made at once, merged in call order
    tools: (request, run) =>
      through(request, run, (run) => {
        const lists = request.calls.map((): Array<Trace.TraceEvent> => [])
        return Effect.map(
          Effect.forEach(request.calls, (call, i) => handlers.tool(call, { ...run, execution: run.execution.recordingInto(lists[i]!) }), {
            concurrency: "unbounded"
          }),
          (outputs) => {
            for (const list of lists) run.execution.events.push(...list)
            return Value.fromArray(outputs.map(Oracle.toValue))
          }
        )
      }),
    memory: (request, run) => through(request, run, (run) => handlers.memory(request, run)),
    ...(ask !== undefined ? { ask: (request: Oracle.AskRequest, run: Driver.RunState) => through(request, run, (run) => ask(request, run)) } : {})
  }
}
