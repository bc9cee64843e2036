/**
 * The live status line of a run: a spinner, the current step and the elapsed time on stderr, only
 * when stderr is a terminal.
 */
import yoctoSpinner from "yocto-spinner"
import type { Agent } from "lambdagent"

export interface Status {
  readonly update: (event: Agent.RunEvent) => void
  /** Print a line on stderr above the status line. */
  readonly log: (line: string) => void
  readonly stop: () => void
}

/** No status line (stderr is not a terminal); lines are still printed. */
export const silentStatus: Status = { update: () => {}, log: (line) => void process.stderr.write(`${line}\n`), stop: () => {} }

export const startStatus = (label: string): Status => {
  if (process.stderr.isTTY !== true) return silentStatus
  const started = Date.now()
  let current = "starting"
  let steps = 0
  const spinner = yoctoSpinner({ text: label, stream: process.stderr }).start()
  const render = () => (spinner.text = `${label}  step ${steps}: ${current}  ${((Date.now() - started) / 1000).toFixed(1)}s`)
  const timer = setInterval(render, 100)
  return {
    update: (event) => {
      if (event.type === "trace") {
        steps++
        current = `${event.event.kind} ${event.event.name}`
      } else current = `${event.name} is answering…`
      render()
    },
    log: (line) => {
      spinner.clear()
      process.stderr.write(`${line}\n`)
      render()
    },
    stop: () => {
      clearInterval(timer)
      spinner.stop()
    }
  }
}
