/**
 * The live status line of a run: a spinner, the current step and the elapsed time on stderr, only
 * when stderr is a terminal.
 */
import yoctoSpinner from "yocto-spinner"
import type { Agent } from "lambdagent"

export interface Status {
  readonly update: (event: Agent.RunEvent) => void
  readonly stop: () => void
}

const silent: Status = { update: () => {}, stop: () => {} }

export const startStatus = (label: string): Status => {
  if (process.stderr.isTTY !== true) return silent
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
    stop: () => {
      clearInterval(timer)
      spinner.stop()
    }
  }
}
