/**
 * A recorded run as a scripted model: a host test answers its LLM calls with the replies a real
 * model gave when the trace was recorded (`lambdagent run --trace-file`), while its own tools run.
 *
 * @since 0.2.0
 * @module
 */
import { Replay, Scripted } from "lambdagent"
import type { LanguageModel } from "lambdagent"

/**
 * A model answering with a trace's recorded LLM replies, in the order they were given, with
 * their token counts; one call more fails with a `ProviderError` (`Unavailable`). `trace` is a
 * trace file's JSON (`{result, trace, stats, replay}`) or a `Replay.Recording`; a trace without
 * a valid recording throws a `ReplayError`.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { createRuntime, Replay, Term } from "lambdagent"
 * import { replayModel } from "lambdagent/testing"
 * const recording = Replay.make({ term: Term.llm({ system: "Be brief." }), answers: [] })
 * const runtime = createRuntime({ model: replayModel({ replay: recording }) })
 * ```
 */
export const replayModel = (trace: unknown): LanguageModel.LanguageModelShape =>
  Scripted.sequence(Replay.llmReplies(Replay.fromTrace(trace)), { name: "replay" })
