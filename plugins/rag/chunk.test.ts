import * as fc from "fast-check"
import { assert, describe, it } from "vitest"
import { chunkDocument, flattenJson, markdownSections, splitSpans } from "./chunk.ts"
import { isRagError } from "./RagError.ts"

describe("splitSpans", () => {
  it("cuts on word boundaries within the size, with overlap", () => {
    const text = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ")
    const spans = splitSpans(text, { chunkSize: 50, chunkOverlap: 12 })
    assert.isAbove(spans.length, 5)
    for (const s of spans) {
      const piece = text.slice(s.start, s.end)
      assert.isAtMost(piece.length, 50)
      assert.match(piece, /^word\d+( word\d+)*$/, `whole words only: ${JSON.stringify(piece)}`)
    }
    // Consecutive chunks share at least one word (the overlap) and every word is covered.
    for (let i = 1; i < spans.length; i++) {
      assert.isBelow(spans[i]!.start, spans[i - 1]!.end, "overlap")
      assert.isAbove(spans[i]!.start, spans[i - 1]!.start, "progress")
    }
    assert.strictEqual(spans[0]!.start, 0)
    assert.strictEqual(spans[spans.length - 1]!.end, text.length)
  })

  it("prefers paragraph breaks, then sentence ends", () => {
    const para1 = "Alpha beta gamma delta. Epsilon zeta eta theta iota."
    const para2 = "Kappa lambda mu nu xi omicron pi rho sigma tau."
    const text = `${para1}\n\n${para2}`
    const spans = splitSpans(text, { chunkSize: 70, chunkOverlap: 0 })
    assert.deepStrictEqual(
      spans.map((s) => text.slice(s.start, s.end)),
      [para1, para2]
    )
    const sentences = "One two three four five six. Seven eight nine ten eleven twelve thirteen."
    const cut = splitSpans(sentences, { chunkSize: 45, chunkOverlap: 0 })
    assert.strictEqual(sentences.slice(cut[0]!.start, cut[0]!.end), "One two three four five six.")
  })

  it("cuts a word longer than the chunk size inside the word", () => {
    const text = "x".repeat(130)
    const spans = splitSpans(text, { chunkSize: 50, chunkOverlap: 0 })
    assert.deepStrictEqual(
      spans.map((s) => s.end - s.start),
      [50, 50, 30]
    )
  })

  it("rejects sizes that cannot work", () => {
    for (const bad of [{ chunkSize: 5 }, { chunkSize: 100, chunkOverlap: 60 }, { chunkSize: 100, chunkOverlap: -1 }]) {
      try {
        splitSpans("text", bad)
        assert.fail("expected InvalidConfig")
      } catch (e) {
        assert.isTrue(isRagError(e) && e.reason === "InvalidConfig", String(e))
      }
    }
  })

  it("property: spans are in bounds, non-empty, bounded, progressing and cover all words", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.stringMatching(/^[a-z]{1,12}$/), fc.constantFrom(" ", "\n", "\n\n", ". ")), { maxLength: 300 }),
        fc.integer({ min: 20, max: 200 }),
        fc.integer({ min: 0, max: 9 }),
        (parts, size, overlapTenth) => {
          const text = parts.join(" ")
          const overlap = Math.floor(((size / 2 - 1) * overlapTenth) / 10)
          const spans = splitSpans(text, { chunkSize: size, chunkOverlap: overlap })
          let coveredTo = 0
          for (const [i, s] of spans.entries()) {
            if (!(s.start >= 0 && s.end <= text.length && s.end > s.start && s.end - s.start <= size)) return false
            if (i > 0 && s.start <= spans[i - 1]!.start) return false
            if (text.slice(coveredTo, s.start).trim() !== "") return false // nothing skipped
            coveredTo = Math.max(coveredTo, s.end)
          }
          return text.slice(coveredTo).trim() === ""
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("markdownSections", () => {
  it("keeps each heading with its section and records the section path", () => {
    const md = [
      "Intro text before any heading.",
      "",
      "# Guide",
      "",
      "## Install",
      "",
      "Run the installer.",
      "",
      "### Linux",
      "",
      "Use the tarball.",
      "",
      "## Use",
      "",
      "Call it."
    ].join("\n")
    const sections = markdownSections(md)
    assert.deepStrictEqual(
      sections.map((s) => s.path),
      [[], ["Guide", "Install"], ["Guide", "Install", "Linux"], ["Guide", "Use"]]
    )
    // "# Guide" has no text of its own: it stays with the next section instead of standing alone.
    assert.isTrue(md.slice(sections[1]!.start, sections[1]!.end).startsWith("# Guide\n\n## Install\n\nRun the installer."))
    assert.isTrue(md.slice(sections[2]!.start, sections[2]!.end).startsWith("### Linux"))
  })

  it("ignores # lines inside fenced code and reads setext headings", () => {
    const md = "Title\n=====\n\nText.\n\n```sh\n# not a heading\n```\n\nSub\n---\n\nMore."
    const sections = markdownSections(md)
    assert.deepStrictEqual(
      sections.map((s) => s.path),
      [["Title"], ["Title", "Sub"]]
    )
    assert.include(md.slice(sections[0]!.start, sections[0]!.end), "# not a heading")
  })
})

describe("flattenJson", () => {
  it("writes path: value lines and separates records by blank lines", () => {
    const text = flattenJson({
      name: "Riverside",
      tags: ["a", "b"],
      branches: [
        { city: "North", open: true },
        { city: "South", open: false }
      ],
      "odd key": null
    })
    assert.strictEqual(
      text,
      [
        "name: Riverside",
        "tags: a, b",
        "branches[0].city: North",
        "branches[0].open: true",
        "",
        "branches[1].city: South",
        "branches[1].open: false",
        "",
        '"odd key": null'
      ].join("\n")
    )
  })
})

describe("chunkDocument", () => {
  it("gives offsets that point at the chunk text, and ids, indexes and headings", () => {
    const body = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} about brewing tea.`).join(" ")
    const md = `# Tea\n\n## Green\n\n${body}\n\n## Black\n\nShort section.`
    const chunks = chunkDocument(md, { source: "docs/tea.md", format: "markdown" }, { chunkSize: 300, chunkOverlap: 40 })
    assert.isAbove(chunks.length, 4)
    chunks.forEach((c, i) => {
      assert.strictEqual(c.id, `docs/tea.md#${i}`)
      assert.strictEqual(c.metadata.index, i)
      assert.strictEqual(md.slice(c.metadata.start, c.metadata.end), c.text)
      assert.isAtMost(c.text.length, 300)
    })
    assert.isTrue(chunks[0]!.text.startsWith("# Tea\n\n## Green"))
    assert.deepStrictEqual(chunks[1]!.metadata.section, ["Tea", "Green"])
    const last = chunks[chunks.length - 1]!
    assert.strictEqual(last.metadata.heading, "Black")
    assert.strictEqual(last.text, "## Black\n\nShort section.")
  })

  it("flattens JSON and reports invalid JSON as InvalidSource naming the file", () => {
    const [c] = chunkDocument(`{"planet":"Mars","moons":["Phobos","Deimos"]}`, { source: "p.json", format: "json" })
    assert.strictEqual(c!.text, "planet: Mars\nmoons: Phobos, Deimos")
    try {
      chunkDocument("{oops", { source: "bad.json", format: "json" })
      assert.fail("expected an error")
    } catch (e) {
      assert.isTrue(isRagError(e))
      if (isRagError(e)) {
        assert.strictEqual(e.reason, "InvalidSource")
        assert.include(e.message, "bad.json is not valid JSON")
      }
    }
  })

  it("gives no chunks for an empty or blank document", () => {
    assert.deepStrictEqual(chunkDocument("  \n\n ", { source: "e.txt", format: "text" }), [])
    assert.deepStrictEqual(chunkDocument("", { source: "e.md", format: "markdown" }), [])
  })
})
