import { Value } from "lambdagent"
import { describe, expect, it } from "vitest"
import { artifactRoleKey, artifactsText, dataPart, inputOf, message, partsText, resultParts, textPart } from "./parts.ts"

describe("message parts and values", () => {
  it("reads a message's input: text parts joined, one data part as JSON, data beside text as JSON text", () => {
    expect(inputOf(message("user", [textPart("a"), textPart("b")]))).toEqual({ input: "a\nb" })
    expect(inputOf(message("user", [dataPart({ n: 2 })]))).toEqual({ input: { n: 2 } })
    expect(inputOf(message("user", [textPart("plan"), dataPart({ days: 3 })]))).toEqual({ input: 'plan\n{"days":3}' })
  })

  it("refuses file parts and empty messages", () => {
    const file = message("user", [{ content: { $case: "raw", value: Buffer.from("x") }, metadata: undefined, filename: "a.png", mediaType: "image/png" }])
    expect(inputOf(file)).toEqual({ refused: "this agent reads text and JSON data parts; the message has a file part (a.png)" })
    expect(inputOf(message("user", []))).toEqual({ refused: "the message has no text or data part" })
  })

  it("writes a text result as text, anything else as text and data; reads parts back without repeating", () => {
    expect(resultParts("hi", "hi")).toEqual([textPart("hi")])
    const list = Value.fromArray([1, 2])
    const parts = resultParts(list, [1, 2])
    expect(parts).toEqual([textPart("[1,2]"), dataPart([1, 2])])
    expect(partsText(parts)).toBe("[1,2]")
    expect(
      partsText([textPart("a"), dataPart({ b: 1 }), { content: { $case: "url", value: "https://x/y.pdf" }, metadata: undefined, filename: "", mediaType: "" }])
    ).toBe('a\n{"b":1}\n[file https://x/y.pdf]')
  })

  it("leaves streamed-token artifacts out of a task's answer", () => {
    const artifact = (id: string, text: string, role?: string) => ({
      artifactId: id,
      name: id,
      description: "",
      parts: [textPart(text)],
      metadata: role === undefined ? undefined : { [artifactRoleKey]: role },
      extensions: []
    })
    expect(artifactsText([artifact("tokens:agent", "Thinking…", "tokens"), artifact("result", "42", "result"), artifact("extra", "and more")])).toBe(
      "42\nand more"
    )
  })
})
