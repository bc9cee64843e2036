import { Effect, Exit } from "effect"
const e = Effect.succeed(1)
console.log(Exit.isExit(e), e._tag, Object.keys(e), e.value)
const f = Effect.fail("x"); console.log(Exit.isExit(f), f._tag)
const m = Effect.map(Effect.succeed(1), x => x + 1); console.log(Exit.isExit(m), m._tag)
