/**
 * The driver's channel state: the channels of each open `channels` scope, the messages they hold,
 * the machines waiting on them, and deadlock detection.
 *
 * Scopes nest; the outermost scope of a nest and everything inside it share one {@link Hub},
 * which counts the machines that can still make progress (running, or waiting on an LLM, a tool
 * or memory). A channel can be reached only from inside its scope, so when that count is 0 while
 * some machine waits on a channel, no message can ever arrive: every waiter fails with a
 * `Deadlock` error naming them. Waiting on a `par`'s branches does not count as progress (the
 * branches do), and the last branch of a `par` to finish hands its count back to the machine
 * that waited, so the count never drops to 0 in between.
 */
import * as Effect from "effect/Effect"
import { EvalError } from "../Errors.ts"
import type { Message } from "../Driver.ts"
import type { ChannelDeclaration } from "../forms/channels.ts"
import type * as Value from "../Value.ts"

/** Told of a send or receive when its channel decides it: the value passed, and where. */
export type Note = (value: Value.Value, message: Message) => void

/** A channel's history as a record holds it: messages sent and received so far, and those still in it, oldest first. */
export interface Backlog {
  readonly sent: number
  readonly received: number
  readonly held: ReadonlyArray<Value.Value>
}

/** A machine waiting on a channel: what it waits for, and how to wake it. */
interface Waiter {
  readonly op: "send" | "receive"
  readonly channel: Channel
  /** Who waits, for messages: `the run` or `branch 1.0`. */
  readonly who: string
  /** For a sender, the value it offers. */
  readonly value: Value.Value
  readonly note: Note | undefined
  readonly resume: (effect: Effect.Effect<Value.Value, EvalError>) => void
}

class Channel {
  readonly buffer: Array<Value.Value> = []
  readonly senders: Array<Waiter> = []
  readonly receivers: Array<Waiter> = []
  /** Messages accepted and handed on so far; the buffer's first message is number `received`. */
  sent = 0
  received = 0
  constructor(
    readonly scope: string,
    readonly name: string,
    readonly capacity: number
  ) {}

  /** A message accepted from a sender: its number. */
  accept(note: Note | undefined, value: Value.Value): number {
    const seq = this.sent++
    note?.(value, { op: "send", scope: this.scope, channel: this.name, seq })
    return seq
  }

  /** Message `seq` taken by a receiver. */
  take(note: Note | undefined, value: Value.Value, seq: number): void {
    this.received++
    note?.(value, { op: "receive", scope: this.scope, channel: this.name, seq })
  }
}

/** The branches of one `par` inside a hub, still running. */
export class Fork {
  constructor(public remaining: number) {}
}

/** The shared state of a nest of scopes. */
export class Hub {
  /** Machines inside the nest that can make progress. */
  private running = 1
  private readonly waiting = new Set<Waiter>()

  /** A `par` inside the nest starts `n` branches while its machine waits. */
  fork(n: number): Fork {
    this.running += n - 1
    return new Fork(n)
  }

  /** A branch of `fork` finished; the last one hands its count back to the machine that waited. */
  branchDone(fork: Fork, steps: number): void {
    if (--fork.remaining === 0) return
    this.running--
    this.check(steps)
  }

  block(waiter: Waiter, steps: number): void {
    this.waiting.add(waiter)
    this.running--
    this.check(steps)
  }

  wake(waiter: Waiter, value: Value.Value): void {
    this.waiting.delete(waiter)
    this.running++
    waiter.resume(Effect.succeed(value))
  }

  /** An interrupted waiter (its run is failing) leaves its channel's queue. */
  cancel(waiter: Waiter): void {
    if (!this.waiting.delete(waiter)) return
    const queue = waiter.op === "send" ? waiter.channel.senders : waiter.channel.receivers
    const i = queue.indexOf(waiter)
    if (i >= 0) queue.splice(i, 1)
  }

  private check(steps: number): void {
    if (this.running > 0 || this.waiting.size === 0) return
    const waiters = [...this.waiting]
    this.waiting.clear()
    const error = deadlock(waiters, steps)
    for (const w of waiters) w.resume(Effect.fail(error))
  }
}

const deadlock = (waiters: ReadonlyArray<Waiter>, steps: number): EvalError => {
  const names = [...new Set(waiters.map((w) => JSON.stringify(w.channel.name)))]
  const who = waiters.map((w) => `${w.who} ${w.op === "send" ? "sends on" : "receives on"} ${JSON.stringify(w.channel.name)}`)
  return new EvalError({
    kind: "Deadlock",
    message: `deadlock on channel${names.length === 1 ? "" : "s"} ${names.join(", ")}: every branch that can use ${names.length === 1 ? "it" : "them"} is waiting (${who.join("; ")})`,
    steps
  })
}

/** One open `channels` scope: `key` is the request key of its `channels` request. */
export class Scope {
  readonly hub: Hub
  private readonly channels = new Map<string, Channel>()

  constructor(
    readonly parent: Scope | undefined,
    declare: ReadonlyArray<ChannelDeclaration>,
    key: string,
    /** What a record says the channels had passed, by name, for a scope that resumes a recorded one. */
    backlog?: ReadonlyMap<string, Backlog>
  ) {
    this.hub = parent?.hub ?? new Hub()
    for (const d of declare) {
      const channel = new Channel(key, d.name, d.capacity)
      const past = backlog?.get(d.name)
      if (past !== undefined) {
        channel.sent = past.sent
        channel.received = past.received
        channel.buffer.push(...past.held)
      }
      this.channels.set(d.name, channel)
    }
  }

  private find(name: string, steps: number): Channel {
    for (let s: Scope | undefined = this; s !== undefined; s = s.parent) {
      const channel = s.channels.get(name)
      if (channel !== undefined) return channel
    }
    const declared = [...this.names()].map((n) => JSON.stringify(n)).join(", ")
    throw new EvalError({ kind: "RuntimeError", message: `unknown channel ${JSON.stringify(name)}: the enclosing channels scopes declare ${declared}`, steps })
  }

  private *names(): Iterable<string> {
    for (let s: Scope | undefined = this; s !== undefined; s = s.parent) yield* s.channels.keys()
  }

  /** Offer `value` on channel `name`: taken at once by a waiting receiver or a free slot, else wait. */
  send(name: string, value: Value.Value, who: string, steps: number, note?: Note): Effect.Effect<Value.Value, EvalError> {
    const channel = this.find(name, steps)
    const receiver = channel.receivers.shift()
    if (receiver !== undefined) {
      channel.take(receiver.note, value, channel.accept(note, value))
      this.hub.wake(receiver, value)
      return Effect.succeed(value)
    }
    if (channel.buffer.length < channel.capacity) {
      channel.accept(note, value)
      channel.buffer.push(value)
      return Effect.succeed(value)
    }
    return this.wait({ op: "send", channel, who, value, note }, channel.senders, steps)
  }

  /** Take the next value of channel `name` (making room for a waiting sender), else wait. */
  receive(name: string, who: string, steps: number, note?: Note): Effect.Effect<Value.Value, EvalError> {
    const channel = this.find(name, steps)
    const sender = channel.senders.shift()
    if (channel.buffer.length > 0) {
      const value = channel.buffer.shift()!
      channel.take(note, value, channel.received)
      if (sender !== undefined) {
        channel.accept(sender.note, sender.value)
        channel.buffer.push(sender.value)
        this.hub.wake(sender, sender.value)
      }
      return Effect.succeed(value)
    }
    if (sender !== undefined) {
      channel.take(note, sender.value, channel.accept(sender.note, sender.value))
      this.hub.wake(sender, sender.value)
      return Effect.succeed(sender.value)
    }
    return this.wait({ op: "receive", channel, who, value: null, note }, channel.receivers, steps)
  }

  private wait(waiter: Omit<Waiter, "resume">, queue: Array<Waiter>, steps: number): Effect.Effect<Value.Value, EvalError> {
    return Effect.callback<Value.Value, EvalError>((resume) => {
      const w: Waiter = { ...waiter, resume }
      queue.push(w)
      this.hub.block(w, steps)
      return Effect.sync(() => this.hub.cancel(w))
    })
  }
}
