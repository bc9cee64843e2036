import { describe, expect, it } from "vitest"
import type { SchemaError } from "./errors.ts"
import { lint, type LintOptions, ruleIds } from "./lint.ts"
import { formatLintResult, lintReport, LintReportSchema } from "./report.ts"
import { lintRules, ruleById } from "./rules.ts"

const MODEL = "model: {provider: openai, name: gpt-4o-mini, temperature: 0.3}"
const SIMPLE = `type: simple\nsystemPrompt: Summarize.\n${MODEL}\n`
/** A parallel agent whose first branch sends on c and second receives from it; more branches may follow. */
const PIPE = (channels: string) =>
  `type: parallel\n${MODEL}\n${channels}\nparallel:\n  agents:\n    - {systemPrompt: A., send: c}\n    - {systemPrompt: B., receive: c}\n`
const REACT = `type: react\nsystemPrompt: Use tools.\n${MODEL}\nreact: {maxSteps: 10}\nmcp:\n  localTools: [search, terminate]\n`
const ROUTER = `type: router\n${MODEL}\nrouter:\n  classifier: {prompt: Classify.}\n  routes:\n    code: {systemPrompt: Code.}\n  default: Sorry.\n`
const CHAIN = `type: chain\n${MODEL}\nchain:\n  steps:\n    - {name: a, prompt: A.}\n    - {name: b, prompt: B.}\n`

const ids = (yaml: string, options: LintOptions = {}) => {
  const result = lint(yaml, options)
  if (result.error !== undefined) throw result.error
  return result.findings.map((f) => f.rule)
}
const finding = (yaml: string, rule: string, options: LintOptions = {}) => lint(yaml, options).findings.find((f) => f.rule === rule)

/** A file to lint, the options to lint it with, and for a firing case the field one finding names. */
interface Case {
  readonly yaml: string
  readonly options?: LintOptions
  readonly field?: string
  /** A quiet case that cannot be analysed at all (only for rules that fire on every analysed file). */
  readonly unreadable?: true
}
type Cases = { readonly fires: ReadonlyArray<Case>; readonly quiet: ReadonlyArray<Case> }

const ONLINE = REACT.replace("localTools: [search, terminate]", "onlineTool: {srv: [search]}\n  localTools: [terminate]")
const SRV_NODE = 'app:\n  mcp:\n    custom:\n      nodes:\n        srv: {url: "https://mcp.example.com"}\n'

/**
 * For every rule of the catalogue: files where it fires (one per condition that triggers it) and
 * files where it does not. The test below walks `lintRules`, so a new rule fails it until it has
 * cases here.
 */
const cases: Readonly<Record<string, Cases>> = {
  L001: {
    fires: [
      { yaml: `type: simple\n${MODEL}\n`, field: "systemPrompt" },
      { yaml: REACT.replace("systemPrompt: Use tools.", "systemPrompt: ' '"), field: "systemPrompt" },
      { yaml: REACT.replace("react: {maxSteps: 10}", "react: {maxSteps: 10, thinkPrompt: ''}"), field: "react.thinkPrompt" },
      { yaml: CHAIN.replace("prompt: B.", "prompt: ''"), field: "chain.steps[1].prompt" },
      { yaml: ROUTER.replace("prompt: Classify.", "prompt: ''"), field: "router.classifier.prompt" },
      { yaml: `type: parallel\n${MODEL}\nparallel:\n  agents: [{systemPrompt: a}]\n  merge: custom\n  mergePrompt: ' '\n`, field: "parallel.mergePrompt" }
    ],
    quiet: [
      { yaml: SIMPLE },
      { yaml: REACT.replace("systemPrompt: Use tools.\n", "").replace("react: {maxSteps: 10}", "react: {maxSteps: 10, thinkPrompt: Think.}") }
    ]
  },
  L002: {
    fires: [
      { yaml: "type: simple\nsystemPrompt: Hi\n", field: "type" },
      { yaml: "type: parallel\nparallel:\n  agents: [{systemPrompt: a, model: {name: m}}]\n  merge: custom\n  mergePrompt: Merge.\n", field: "type" }
    ],
    quiet: [{ yaml: SIMPLE }, { yaml: "type: simple\nsystemPrompt: Hi\n", options: { overrides: { model: "gpt-4o" } } }]
  },
  L003: {
    fires: [{ yaml: REACT.replace("maxSteps: 10", "maxSteps: 0"), field: "react.maxSteps" }],
    quiet: [{ yaml: REACT }, { yaml: REACT.replace("maxSteps: 10", "maxSteps: 0"), options: { overrides: { maxSteps: 3 } } }]
  },
  L004: {
    fires: [
      { yaml: REACT.replace("search, terminate", "search"), field: "mcp.localTools" },
      { yaml: `type: react\nsystemPrompt: Think.\n${MODEL}\nreact: {maxSteps: 3}\n`, field: "type" }
    ],
    quiet: [{ yaml: REACT }, { yaml: REACT.replace("search, terminate", "search, Terminate") }]
  },
  L005: {
    fires: [
      { yaml: `type: router\n${MODEL}\nrouter:\n  classifier: {prompt: Classify.}\n  routes: {}\n  default: Sorry.\n`, field: "router.routes" },
      { yaml: `type: router\n${MODEL}\nrouter:\n  classifier: {prompt: Classify.}\n  default: Sorry.\n`, field: "router.classifier" }
    ],
    quiet: [{ yaml: ROUTER }]
  },
  L006: {
    fires: [{ yaml: `type: chain\n${MODEL}\nchain: {steps: []}\n`, field: "chain.steps" }],
    quiet: [{ yaml: CHAIN }]
  },
  L007: {
    fires: [
      { yaml: SIMPLE.replace("temperature: 0.3", "temperature: 1.8"), field: "model.temperature" },
      { yaml: `${CHAIN.replace("{name: b, prompt: B.}", "{name: b, prompt: B., model: {temperature: 2}}")}`, field: "chain.steps[1].model.temperature" }
    ],
    quiet: [{ yaml: SIMPLE.replace("temperature: 0.3", "temperature: 1.5") }]
  },
  L008: {
    fires: [
      { yaml: `${SIMPLE}memory: {size: 5}\n`, field: "memory" },
      { yaml: `${SIMPLE}memory: {size: 5, ttl: 0}\n`, field: "memory.ttl" }
    ],
    quiet: [{ yaml: `${SIMPLE}memory: {size: 5, ttl: 60}\n` }, { yaml: `${SIMPLE}memory: {enabled: false, ttl: 0}\n` }]
  },
  L009: {
    fires: [{ yaml: `${SIMPLE}memory: {size: 0, ttl: 60}\n`, field: "memory.size" }],
    quiet: [{ yaml: `${SIMPLE}memory: {size: 5, ttl: 60}\n` }, { yaml: `${SIMPLE}memory: {enabled: false, size: 0}\n` }]
  },
  L010: {
    fires: [
      { yaml: REACT.replace("maxSteps: 10", "maxSteps: 60"), field: "react.maxSteps" },
      { yaml: REACT, options: { overrides: { maxSteps: 51 } }, field: "react.maxSteps" },
      // maxSteps only in the overrides: the finding points at what the file has
      { yaml: REACT.replace("react: {maxSteps: 10}\n", "react: {toolTimeout: 5}\n"), options: { overrides: { maxSteps: 51 } }, field: "react" },
      { yaml: REACT.replace("react: {maxSteps: 10}\n", ""), options: { overrides: { maxSteps: 51 } }, field: "type" }
    ],
    quiet: [
      { yaml: REACT.replace("maxSteps: 10", "maxSteps: 50") },
      { yaml: REACT.replace("maxSteps: 10", "maxSteps: 60"), options: { overrides: { maxSteps: 20 } } }
    ]
  },
  L011: {
    fires: [
      { yaml: REACT.replace("search, terminate", "terminate"), field: "mcp" },
      { yaml: REACT.replace("mcp:\n", "mcp:\n  policy: {mode: disable}\n"), field: "mcp" }
    ],
    quiet: [{ yaml: REACT }]
  },
  L012: {
    fires: [
      { yaml: `${SIMPLE}guard: {validator: "len(x) > 0", retry: 6}\n`, field: "guard.retry" },
      { yaml: CHAIN.replace("{name: b, prompt: B.}", '{name: b, prompt: B., guard: {validator: "len(x) > 0", retry: 9}}'), field: "chain.steps[1].guard.retry" }
    ],
    quiet: [{ yaml: `${SIMPLE}guard: {validator: "len(x) > 0", retry: 5}\n` }]
  },
  L013: {
    fires: [{ yaml: ROUTER.replace("  default: Sorry.\n", ""), field: "router" }],
    quiet: [{ yaml: ROUTER }]
  },
  L014: {
    fires: [
      { yaml: SIMPLE.replace("temperature: 0.3", "temperature: 0"), field: "model.temperature" },
      {
        yaml: ROUTER.replace("classifier: {prompt: Classify.}", "classifier: {prompt: Classify., model: {temperature: 0}}"),
        field: "router.classifier.model.temperature"
      }
    ],
    quiet: [{ yaml: SIMPLE }]
  },
  L015: {
    fires: [
      { yaml: `${SIMPLE}memory: {ttl: 60}\n`, field: "memory" },
      { yaml: ROUTER.replace("code: {systemPrompt: Code.}", "code: {systemPrompt: Code., memory: {ttl: 60}}"), field: "router.routes.code.memory" }
    ],
    quiet: [{ yaml: `${SIMPLE}memory: {enabled: false}\n` }, { yaml: SIMPLE }]
  },
  L016: {
    fires: [
      { yaml: `${SIMPLE}rag: {source: docs}\n`, field: "rag" },
      { yaml: `${REACT}rag: {source: docs}\n`, field: "rag" }
    ],
    quiet: [{ yaml: `${SIMPLE}rag: {enabled: false}\n` }, { yaml: SIMPLE }]
  },
  L017: {
    fires: [
      { yaml: REACT.replace("react: {maxSteps: 10}\n", ""), field: "type" },
      {
        yaml: `type: parallel\n${MODEL}\nparallel:\n  agents: [{type: react, systemPrompt: a, mcp: {localTools: [q, terminate]}}]\n`,
        field: "parallel.agents[0].type"
      }
    ],
    quiet: [{ yaml: REACT }, { yaml: REACT.replace("react: {maxSteps: 10}\n", ""), options: { overrides: { maxSteps: 5 } } }]
  },
  L018: {
    fires: [
      { yaml: REACT.replace("maxSteps: 10", "maxSteps: 150"), field: "type" },
      { yaml: `${REACT}runtime: {maxToolCalls: 5}\n`, field: "runtime.maxToolCalls" },
      { yaml: `${REACT}runtime: {maxLlmCalls: 5}\n`, field: "runtime.maxLlmCalls" }
    ],
    quiet: [
      { yaml: `${REACT.replace("maxSteps: 10", "maxSteps: 150")}runtime: {maxLlmCalls: 150, maxToolCalls: 150}\n` },
      { yaml: `${REACT}runtime: {maxLlmCalls: 10, maxToolCalls: 10}\n` }
    ]
  },
  L023: {
    fires: [
      { yaml: ROUTER.replace("default: Sorry.", "default: ''"), field: "router.default" },
      { yaml: ROUTER.replace("code: {systemPrompt: Code.}", "code: ' '"), field: "router.routes.code" }
    ],
    quiet: [{ yaml: ROUTER }]
  },
  L024: {
    fires: [
      { yaml: CHAIN.replace("name: b", "name: a"), field: "chain.steps[1].name" },
      { yaml: `type: parallel\n${MODEL}\nparallel:\n  agents: [{name: x, systemPrompt: a}, {name: x, systemPrompt: b}]\n`, field: "parallel.agents[1]" }
    ],
    quiet: [{ yaml: CHAIN }]
  },
  L025: {
    fires: [
      { yaml: `${SIMPLE}guard: {validator: "len(x) > 0"}\n`, field: "guard" },
      { yaml: `${SIMPLE}guard: {validator: "len(x) > 0", retry: 0}\n`, field: "guard.retry" }
    ],
    quiet: [{ yaml: `${SIMPLE}guard: {validator: "len(x) > 0", retry: 1}\n` }]
  },
  L026: {
    fires: [
      { yaml: ONLINE, field: "type" },
      { yaml: `${REACT}cli:\n  agents:\n    summarizer: {command: cat}\n`, field: "type" },
      { yaml: `${REACT}a2a:\n  clients: [{name: planner, url: "https://a2a.example.com"}]\n`, field: "type" }
    ],
    quiet: [{ yaml: REACT }]
  },
  L027: {
    fires: [
      { yaml: `type: chain\n${MODEL}\nchain:\n  steps:\n    - tool: fetch\n`, field: "chain.steps[0].tool" },
      { yaml: REACT, options: { knownTools: ["calculator"] }, field: "mcp.localTools[0]" }
    ],
    quiet: [
      { yaml: `type: chain\n${MODEL}\nmcp: {localTools: [fetch]}\nchain:\n  steps:\n    - tool: fetch\n` },
      { yaml: REACT, options: { knownTools: ["search"] } }
    ]
  },
  L028: {
    fires: [
      {
        yaml: ROUTER.replace("classifier: {prompt: Classify.}", "classifier: {prompt: Classify., categories: [code, math]}"),
        field: "router.classifier.categories[1]"
      },
      { yaml: ROUTER.replace("classifier: {prompt: Classify.}", "classifier: {prompt: Classify., categories: [math]}"), field: "router.routes.code" }
    ],
    quiet: [
      { yaml: ROUTER.replace("classifier: {prompt: Classify.}", "classifier: {prompt: Classify., categories: [code]}") },
      { yaml: ROUTER.replace("classifier: {prompt: Classify.}", "classifier: {prompt: Classify., categories: [Code]}") },
      { yaml: ROUTER }
    ]
  },
  L029: {
    fires: [
      { yaml: `${SIMPLE}guard: {validator: "1 > 2", retry: 1}\n`, field: "guard.validator" },
      { yaml: `${SIMPLE}guard: {validator: "True", retry: 1}\n`, field: "guard.validator" },
      { yaml: `${SIMPLE}guard: {validator: "int('many') > 1", retry: 1}\n`, field: "guard.validator" },
      {
        yaml: ROUTER.replace("    code: {systemPrompt: Code.}\n", "    code: {systemPrompt: Code.}\n    Code: {systemPrompt: Other.}\n"),
        field: "router.routes.Code"
      },
      { yaml: ROUTER.replace("    code:", "    '':"), field: 'router.routes[""]' },
      { yaml: ROUTER.replace("    code:", "    ' code':"), field: 'router.routes[" code"]' },
      { yaml: REACT.replace("mcp:\n", "mcp:\n  policy: {mode: disable}\n"), field: "mcp.policy.mode" }
    ],
    quiet: [
      { yaml: `${SIMPLE}guard: {validator: "len(x) > 2", retry: 1}\n` },
      { yaml: ROUTER },
      { yaml: REACT.replace("search, terminate", "terminate").replace("mcp:\n", "mcp:\n  policy: {mode: disable}\n") }
    ]
  },
  L030: {
    fires: [
      { yaml: `${CHAIN}systemPrompt: Ignored.\n`, field: "systemPrompt" },
      { yaml: `${SIMPLE}react: {maxSteps: 3}\n`, field: "react" },
      { yaml: `${SIMPLE}mcp: {localTools: [a]}\n`, field: "mcp" },
      { yaml: `${SIMPLE}sharedMemory: {strategy: redis, path: team.db}\n`, field: "sharedMemory.path" },
      { yaml: `${SIMPLE}sharedMemory: {enabled: false, appendOnly: true}\n`, field: "sharedMemory" },
      { yaml: `${SIMPLE}sandbox: {enabled: false, policy: strict}\n`, field: "sandbox" },
      {
        yaml: `type: chain\n${MODEL}\nchain:\n  steps:\n    - {tool: search, output: {schema: {type: object}}}\nmcp: {localTools: [search]}\n`,
        field: "chain.steps[0].output"
      },
      {
        yaml: "type: simple\nsystemPrompt: Extract.\nmodel: {provider: openai, conversation: true}\noutput: {schema: {type: object}}\n",
        field: "model.conversation"
      }
    ],
    quiet: [
      { yaml: CHAIN },
      { yaml: `${SIMPLE}output: {schema: {type: object}}\n` },
      { yaml: REACT },
      { yaml: SIMPLE },
      { yaml: `${SIMPLE}sharedMemory: {strategy: sqlite, path: team.db}\n` },
      { yaml: `${SIMPLE}sandbox: {enabled: false}\n` },
      { yaml: `${SIMPLE}sandbox: {policy: strict}\n` }
    ]
  },
  L031: {
    fires: [
      { yaml: REACT, options: { maxLlmCalls: 5 }, field: "type" },
      { yaml: REACT, options: { maxToolCalls: 3 }, field: "type" }
    ],
    quiet: [{ yaml: REACT }, { yaml: REACT, options: { maxLlmCalls: 10, maxToolCalls: 10 } }]
  },
  L032: {
    // Every file that can be analysed gets its worst case; only a file that cannot has none.
    fires: [
      { yaml: SIMPLE, field: "type" },
      { yaml: REACT, field: "type" }
    ],
    quiet: [{ yaml: "type: simple\nsystemPromt: x\n", unreadable: true }]
  },
  L033: {
    fires: [
      { yaml: ONLINE, field: "mcp.onlineTool.srv" },
      {
        yaml: ROUTER.replace(
          "code: {systemPrompt: Code.}",
          "code: {type: react, systemPrompt: Code., react: {maxSteps: 2}, mcp: {onlineTool: {srv: [q]}, localTools: [terminate]}}"
        ),
        field: "router.routes.code.mcp.onlineTool.srv"
      }
    ],
    quiet: [
      { yaml: `${ONLINE}${SRV_NODE}` },
      { yaml: `${ONLINE}mcpServers:\n  - {name: srv, transport: stdio, command: srv, tools: [search]}\n` },
      { yaml: REACT }
    ]
  },
  L034: {
    fires: [
      {
        yaml: `${REACT}mcpServers:\n  - {name: s, transport: stdio, command: srv, tools: [search]}\ncli:\n  agents:\n    search: {command: grep}\n`,
        field: "cli.agents.search"
      },
      {
        yaml: REACT.replace("localTools: [search, terminate]", "onlineTool: {a: [search], b: [search]}\n  localTools: [terminate]"),
        field: "mcp.onlineTool.b[0]"
      }
    ],
    quiet: [{ yaml: REACT }, { yaml: `${ONLINE}mcpServers:\n  - {name: srv, transport: stdio, command: srv, tools: [search]}\n` }]
  },
  L035: {
    fires: [
      { yaml: `${SIMPLE}memory: {strategy: custom, ttl: 60}\n`, field: "memory.strategy" },
      {
        yaml: ROUTER.replace("code: {systemPrompt: Code.}", "code: {systemPrompt: Code., memory: {strategy: custom, ttl: 60}}"),
        field: "router.routes.code.memory.strategy"
      }
    ],
    quiet: [
      { yaml: `${SIMPLE}memory: {strategy: custom, customStore: crm, ttl: 60}\n` },
      { yaml: `${SIMPLE}memory: {strategy: custom, ttl: 60}\n`, options: { overrides: { memoryStore: {} as never } } }
    ]
  },
  L036: {
    fires: [{ yaml: `${SIMPLE}sharedMemory: {strategy: custom}\n`, field: "sharedMemory.strategy" }],
    quiet: [{ yaml: `${SIMPLE}sharedMemory: {strategy: custom, customStore: team}\n` }, { yaml: `${SIMPLE}sharedMemory: {strategy: local}\n` }]
  },
  L037: {
    fires: [
      { yaml: `${SIMPLE}sharedMemory: {strategy: local}\n`, field: "sharedMemory" },
      { yaml: `${REACT}sharedMemory: {}\n`, field: "sharedMemory" }
    ],
    quiet: [{ yaml: `${SIMPLE}sharedMemory: {enabled: false}\n` }, { yaml: SIMPLE }]
  },
  L038: {
    fires: [{ yaml: `${SIMPLE}sharedMemory: {inject: false}\n`, field: "sharedMemory.inject" }],
    quiet: [{ yaml: `${SIMPLE}sharedMemory: {inject: false, publish: true}\n` }, { yaml: `${REACT}sharedMemory: {inject: false}\n` }]
  },
  L039: {
    fires: [
      { yaml: `${SIMPLE}sandbox: {timeout: 0}\n`, field: "sandbox.timeout" },
      { yaml: `${SIMPLE}sandbox: {policy: strict, memory_mb: 4}\n`, field: "sandbox.memory_mb" },
      { yaml: `${SIMPLE}sandbox: {max_fds: 2}\n`, field: "sandbox.max_fds" },
      { yaml: `${SIMPLE}sandbox: {max_output_bytes: 0}\n`, field: "sandbox.max_output_bytes" }
    ],
    quiet: [
      { yaml: `${SIMPLE}sandbox: {policy: strict, network: true}\n` },
      { yaml: `${SIMPLE}sandbox: {timeout: 1, memory_mb: 8, max_fds: 3, max_output_bytes: 1}\n` },
      { yaml: `${SIMPLE}sandbox: {enabled: false, timeout: 0}\n` }
    ]
  },
  L040: {
    fires: [
      {
        yaml: `${SIMPLE}cli:\n  agents:\n    sub: {command: "lambdagent run sub.yml --quiet -"}\nsandbox: {policy: default}\n`,
        field: "cli.agents.sub.command"
      },
      { yaml: `${SIMPLE}cli:\n  agents:\n    js: {command: "/usr/bin/node render.js"}\nsandbox: {memory_mb: 512}\n`, field: "sandbox.memory_mb" }
    ],
    quiet: [
      { yaml: `${SIMPLE}cli:\n  agents:\n    sub: {command: "lambdagent run sub.yml --quiet -"}\nsandbox: {memory_mb: 1024}\n` },
      { yaml: `${SIMPLE}cli:\n  agents:\n    sub: {command: "lambdagent run sub.yml --quiet -"}\nsandbox: {policy: permissive}\n` },
      { yaml: `${SIMPLE}cli:\n  agents:\n    wc: {command: "wc -l"}\nsandbox: {policy: strict}\n` },
      { yaml: `${SIMPLE}cli:\n  agents:\n    sub: {command: "lambdagent run sub.yml --quiet -"}\n` }
    ]
  },
  L041: {
    fires: [
      { yaml: `${SIMPLE}sandbox: {policy: strict}\n`, field: "sandbox" },
      { yaml: `${SIMPLE}sandbox: {}\n`, field: "sandbox" }
    ],
    quiet: [{ yaml: SIMPLE }, { yaml: `${SIMPLE}sandbox: {enabled: false}\n` }]
  },
  L042: {
    fires: [
      { yaml: `type: groupchat\n${MODEL}\ngroupchat:\n  maxRounds: 30\n  agents: [{systemPrompt: a}, {systemPrompt: b}]\n`, field: "groupchat.maxRounds" },
      {
        yaml: `type: groupchat\n${MODEL}\ngroupchat:\n  agents: [{systemPrompt: a}, {systemPrompt: b}, {systemPrompt: c}, {systemPrompt: d}, {systemPrompt: e}, {systemPrompt: f}]\n`,
        field: "groupchat"
      }
    ],
    quiet: [{ yaml: `type: groupchat\n${MODEL}\ngroupchat:\n  agents: [{systemPrompt: a}, {systemPrompt: b}]\n` }]
  },
  L043: {
    fires: [
      {
        yaml: `type: handoff\n${MODEL}\nhandoff:\n  selector: {prompt: Pick., targets: [a]}\n  registry:\n    a: {systemPrompt: A.}\n    b: {systemPrompt: B.}\n`,
        field: "handoff.registry.b"
      }
    ],
    quiet: [
      { yaml: `type: handoff\n${MODEL}\nhandoff:\n  selector: {prompt: Pick.}\n  registry:\n    a: {systemPrompt: A.}\n    b: {systemPrompt: B.}\n` },
      {
        yaml: `type: handoff\n${MODEL}\nhandoff:\n  selector: {prompt: Pick., targets: [a]}\n  registry:\n    a: {systemPrompt: "A; else answer HANDOFF b"}\n    b: {systemPrompt: B.}\n`
      }
    ]
  },
  L044: {
    fires: [{ yaml: `${SIMPLE}skills:\n  - {name: s, agent: {systemPrompt: S.}}\n`, field: "skills[0]" }],
    quiet: [
      { yaml: `${REACT.replace("[search, terminate]", "[s, terminate]")}skills:\n  - {name: s, agent: {systemPrompt: S.}}\n` },
      { yaml: `type: skill\n${MODEL}\nskill: {select: tag}\nskills:\n  - {name: s, agent: {systemPrompt: S.}}\n` }
    ]
  },
  L045: {
    fires: [
      {
        yaml: `type: handoff\n${MODEL}\nhandoff:\n  selector: {prompt: Pick.}\n  registry:\n    a: {systemPrompt: "A; else HANDOFF b"}\n    b: {systemPrompt: "B; else HANDOFF: a"}\n`,
        field: "handoff.registry.a"
      }
    ],
    quiet: [
      {
        yaml: `type: handoff\n${MODEL}\nhandoff:\n  selector: {prompt: Pick.}\n  registry:\n    a: {systemPrompt: "A; else HANDOFF b"}\n    b: {systemPrompt: B.}\n`
      }
    ]
  },
  L046: {
    fires: [
      { yaml: `${PIPE("channels: [{name: c}]")}    - {systemPrompt: D., send: typo}\n`, field: "parallel.agents[2].send" },
      { yaml: PIPE(""), field: "parallel.agents[0].send" }
    ],
    quiet: [{ yaml: PIPE("channels: [{name: c}]") }]
  },
  L047: {
    fires: [{ yaml: PIPE("channels: [{name: c}, {name: c, capacity: 1}]"), field: "channels[1].name" }],
    quiet: [{ yaml: PIPE("channels: [{name: c}]") }]
  },
  L048: {
    fires: [{ yaml: `${PIPE("channels: [{name: c}, {name: lost}]")}    - {systemPrompt: D., send: lost}\n`, field: "channels[1]" }],
    quiet: [{ yaml: PIPE("channels: [{name: c}]") }]
  },
  L049: {
    fires: [{ yaml: `${PIPE("channels: [{name: c}, {name: silent}]")}    - {systemPrompt: D., receive: silent}\n`, field: "channels[1]" }],
    quiet: [{ yaml: PIPE("channels: [{name: c}]") }]
  },
  L050: {
    fires: [
      { yaml: `${SIMPLE}output: {schema: {type: wat}}\n`, field: "output.schema" },
      { yaml: CHAIN.replace("{name: b, prompt: B.}", "{name: b, prompt: B., output: {schema: {type: [1]}}}"), field: "chain.steps[1].output.schema" }
    ],
    quiet: [{ yaml: `${SIMPLE}output: {schema: {type: object, properties: {city: {type: string}}}}\n` }, { yaml: SIMPLE }]
  },
  L051: {
    fires: [
      { yaml: `${SIMPLE}runtime: {costBudget: 2.5}\n`, field: "runtime.costBudget" },
      { yaml: `${SIMPLE}role: Writer\n`, field: "role" },
      { yaml: CHAIN.replace("{name: b, prompt: B.}", "{name: b, prompt: B., inputType: str}"), field: "chain.steps[1].inputType" }
    ],
    quiet: [{ yaml: SIMPLE }, { yaml: `${SIMPLE}runtime: {maxLlmCalls: 3}\nsandbox: {network: true}\n` }]
  },
  L052: {
    fires: [
      { yaml: `${SIMPLE}guard: {validator: "len(x) > 3", retry: 1, fallback: "n/a"}\n`, field: "guard.fallback" },
      {
        yaml: CHAIN.replace("{name: b, prompt: B.}", '{name: b, prompt: B., guard: {validator: "x", retry: 1, fallback: none}}'),
        field: "chain.steps[1].guard.fallback"
      }
    ],
    quiet: [
      { yaml: `${SIMPLE}guard: {validator: "len(x) > 3", retry: 1, fallback: last}\n` },
      { yaml: `${SIMPLE}guard: {validator: "len(x) > 3", retry: 1, fallback: {value: "n/a"}}\n` },
      { yaml: `${SIMPLE}guard: {validator: "len(x) > 3", retry: 1, fallback: error}\n` }
    ]
  }
}

describe("every rule of the catalogue fires when it should and not otherwise", () => {
  it.each(lintRules.map((r) => [r.id, r] as const))("%s", (id, rule) => {
    const ruleCases = cases[id]
    expect(ruleCases, `${id} has no cases: add files where it fires and where it does not`).toBeDefined()
    expect(ruleCases!.fires.length).toBeGreaterThan(0)
    expect(ruleCases!.quiet.length).toBeGreaterThan(0)
    for (const c of ruleCases!.fires) {
      const result = lint(c.yaml, c.options)
      expect(result.error, c.yaml).toBeUndefined()
      const found = result.findings.filter((f) => f.rule === id)
      expect(found.length, `${id} should fire on:\n${c.yaml}`).toBeGreaterThan(0)
      for (const f of found) {
        expect(f.level).toBe(rule.level)
        expect(f.lambda).toBe(rule.lambda)
        expect(f.line).toBeGreaterThan(0)
      }
      if (c.field !== undefined)
        expect(
          found.map((f) => f.field),
          c.yaml
        ).toContain(c.field)
    }
    for (const c of ruleCases!.quiet) {
      const result = lint(c.yaml, c.options)
      if (c.unreadable === true) expect(result.error).toBeDefined()
      else expect(result.error, c.yaml).toBeUndefined()
      expect(
        result.findings.map((f) => f.rule),
        `${id} should not fire on:\n${c.yaml}`
      ).not.toContain(id)
    }
  })

  it("has cases only for rules of the catalogue", () => {
    expect(Object.keys(cases).filter((id) => ruleById(id) === undefined)).toEqual([])
    expect(ruleIds).toEqual(lintRules.map((r) => r.id))
  })

  it("L029 says what a validator that does not read x raises: it is false every time", () => {
    expect(finding(`${SIMPLE}guard: {validator: "int('many') > 1", retry: 1}\n`, "L029")?.message).toBe(
      'the validator does not depend on x and is always false (it raises ValueError: toInt: "many" is not an integer): every output is rejected, so the agent\'s result is unreachable'
    )
  })

  it("L041 states the policy, L039 and L040 say what to change", () => {
    expect(finding(`${SIMPLE}sandbox: {policy: strict, network: true}\n`, "L041")?.message).toBe(
      "sandbox enabled for every tool that runs a process: strict: 5 s CPU, 64 MB, network, 16 processes, 4096 B output, 8 files"
    )
    expect(finding(`${SIMPLE}sandbox: {memory_mb: 4}\n`, "L039")?.message).toBe(
      "sandbox.memory_mb is 4: not even /bin/sh starts in less than about 4 MB of address space, and most programs need more"
    )
    expect(finding(`${SIMPLE}cli:\n  agents:\n    sub: {command: "npx tsx x.ts"}\nsandbox: {}\n`, "L040")?.message).toBe(
      "cli.agents.sub runs npx, which reserves about 1 GB of address space when it starts: it cannot start under the sandbox's 256 MB (set sandbox.memory_mb to 1024 or more)"
    )
  })

  it("L031 names the budget it exceeds", () => {
    expect(finding(REACT, "L031", { maxToolCalls: 3 })?.message).toBe("up to 10 tool calls, above --max-tool-calls 3")
  })

  it("L032 always reports the worst case", () => {
    expect(finding(SIMPLE, "L032")?.message).toBe("worst case per input: 1 LLM call, 0 tool calls")
    expect(finding(REACT, "L032")?.message).toBe("worst case per input: 10 LLM calls, 10 tool calls")
  })
})

describe("rule details", () => {
  it("L001 and the other blocking problems are error findings, not exceptions", () => {
    const result = lint("type: router\nrouter:\n  classifier: {prompt: ''}\n  routes: {}\n")
    expect(result.error).toBeUndefined()
    expect(result.findings.filter((f) => f.level === "error").map((f) => f.rule)).toEqual(["L002", "L001", "L005"])
  })

  it("L002 is reported once, at the outermost agent without a model", () => {
    const yaml =
      "type: router\nrouter:\n  classifier: {prompt: p}\n  routes:\n    a: {systemPrompt: A}\n    b: {systemPrompt: B, model: {name: m}}\n  default: x\n"
    expect(
      lint(yaml)
        .findings.filter((f) => f.rule === "L002")
        .map((f) => f.field)
    ).toEqual(["type"])
    const inherited = "type: router\nmodel: {name: m}\nrouter:\n  classifier: {prompt: p}\n  routes:\n    a: {systemPrompt: A}\n  default: x\n"
    expect(ids(inherited)).not.toContain("L002")
    expect(ids("type: simple\nsystemPrompt: Hi\n", { overrides: { model: "gpt-4o" } })).not.toContain("L002")
  })

  it("L007 and L014 check every model block, with positions", () => {
    const yaml = `type: chain\n${MODEL}\nchain:\n  steps:\n    - prompt: a\n      model: {temperature: 1.9}\n    - prompt: b\n      model: {temperature: 0}\n`
    expect(
      lint(yaml)
        .findings.filter((f) => f.rule === "L007" || f.rule === "L014")
        .map((f) => [f.rule, f.field, f.line])
    ).toEqual([
      ["L007", "chain.steps[0].model.temperature", 6],
      ["L014", "chain.steps[1].model.temperature", 8]
    ])
  })

  it("shared memory: L037 sums it up, L038 sees react agents' tools, L030 flags fields of another strategy, L034 a tool name clash", () => {
    expect(finding(`${SIMPLE}sharedMemory: {strategy: sqlite, appendOnly: true}\n`, "L037")?.message).toBe(
      "shared memory enabled: strategy=sqlite (.lambdagent/shared-memory.db), namespace=shared, appendOnly=true, size=1000, shown to agents=true, answers recorded=false"
    )
    // a react agent gets the tools even when nothing is shown to it
    expect(ids(`${REACT}sharedMemory: {inject: false}\n`)).not.toContain("L038")
    const disabled = REACT.replace("localTools: [search, terminate]", "localTools: [search, terminate]\n  policy: {mode: disable}")
    expect(ids(`${disabled}sharedMemory: {inject: false}\n`)).toContain("L038")
    // a router shows nothing itself, but its simple routes do
    expect(ids(`${ROUTER}sharedMemory: {}\n`)).not.toContain("L038")
    const misplaced = lint(`${SIMPLE}sharedMemory:\n  strategy: redis\n  path: team.db\n  customStore: crm\n`).findings.filter((f) => f.rule === "L030")
    expect(misplaced.map((f) => [f.field, f.line])).toEqual([
      ["sharedMemory.path", 6],
      ["sharedMemory.customStore", 7]
    ])
    expect(finding(`${SIMPLE}sharedMemory: {enabled: false, appendOnly: true}\n`, "L030")?.message).toBe(
      "sharedMemory is disabled (enabled: false): its other fields have no effect"
    )
    const clash = `${REACT}sharedMemory: {}\ncli:\n  agents:\n    shared_read: {command: cat}\n`
    expect(finding(clash, "L034")?.message).toBe('tool "shared_read" is declared by cli.agents and by sharedMemory; a tool name must have one source')
  })

  it("L027 checks local tools against the runtime's tools when given", () => {
    expect(ids(REACT, { knownTools: ["search"] })).not.toContain("L027")
    expect(finding(REACT, "L027", { knownTools: ["calculator"] })?.message).toBe('tool "search" is not one the runtime provides (calculator)')
    expect(finding(REACT, "L027", { knownTools: ["calculator"] })?.field).toBe("mcp.localTools[0]")
  })

  it("L028 reports categories without a route and routes outside the categories", () => {
    const yaml = ROUTER.replace("classifier: {prompt: Classify.}", "classifier: {prompt: Classify., categories: [math]}")
    expect(
      lint(yaml)
        .findings.filter((f) => f.rule === "L028")
        .map((f) => [f.field, f.message])
    ).toEqual([
      ["router.classifier.categories[0]", 'category "math" has no route: inputs labelled math go to the default'],
      ["router.routes.code", 'route "code" is not among classifier.categories: the classifier is never asked to answer it']
    ])
  })

  it("L029 finds unreachable branches", () => {
    const messages = (yaml: string) =>
      lint(yaml)
        .findings.filter((f) => f.rule === "L029")
        .map((f) => f.message)
    expect(messages(`${SIMPLE}guard: {validator: "True", retry: 1}\n`)).toEqual([
      "the validator does not depend on x and is always true: the guard never fails and its fallback is unreachable"
    ])
    expect(messages(ROUTER.replace("    code: {systemPrompt: Code.}\n", "    code: {systemPrompt: Code.}\n    Code: {systemPrompt: Other.}\n"))[0]).toMatch(
      /differ only in letter case/
    )
    expect(messages(ROUTER.replace("    code: {systemPrompt: Code.}\n", "    '': {systemPrompt: Anything.}\n    code: {systemPrompt: Code.}\n"))[0]).toMatch(
      /matches every answer: the routes after it are reachable only by an exact answer and the default is unreachable/
    )
    expect(messages(ROUTER.replace("    code:", "    ' code':"))[0]).toMatch(/surrounding spaces/)
    expect(messages(REACT.replace("mcp:\n", "mcp:\n  policy: {mode: disable}\n"))).toEqual(["mcp.policy.mode is disable: search is never offered to the agent"])
  })

  it("L030 finds fields with no effect", () => {
    const fields = (yaml: string) =>
      lint(yaml)
        .findings.filter((f) => f.rule === "L030")
        .map((f) => f.field)
    expect(fields(`${SIMPLE}react: {maxSteps: 3}\nmcp: {localTools: [a]}\n`)).toEqual(["react", "mcp"])
    // earlyStop is compiled into the loop: a field with an effect, and an expression checked like a validator
    const earlyStop = (expression: string) => REACT.replace("react: {maxSteps: 10}", `react: {maxSteps: 10, earlyStop: ${JSON.stringify(expression)}}`)
    expect(fields(earlyStop("'FOUND' in x"))).toEqual([])
    expect(lint(earlyStop("done in x")).error).toMatchObject({ _tag: "SchemaError" })
    expect((lint(earlyStop("done in x")).error as SchemaError).issues[0]).toMatchObject({ field: "react.earlyStop", line: 4 })
    expect(fields("type: simple\nsystemPrompt: x\nmodel: {name: m, contextWindow: 8000, maxHistoryTokens: 100}\n")).toEqual(["model.contextWindow"])
    expect(fields("type: simple\nsystemPrompt: x\nmodel: {name: m, maxHistoryTokens: 100, conversation: false}\n")).toEqual(["model.maxHistoryTokens"])
    expect(fields(`type: parallel\n${MODEL}\nparallel:\n  agents: [{systemPrompt: a}]\n  mergePrompt: unused\n`)).toEqual(["parallel.mergePrompt"])
    expect(fields(`${SIMPLE}rag: {source: docs, agentic: true}\n`)).toEqual(["rag.agentic"])
    expect(fields("type: simple\nsystemPrompt: x\nmodel: {provider: openai, name: m, session: true}\n")).toEqual(["model.session"])
    expect(fields("type: simple\nsystemPrompt: x\nmodel: {provider: claude-code, session: true, conversation: false}\n")).toEqual(["model.session"])
    expect(fields("type: simple\nsystemPrompt: x\nmodel: {provider: claude-code, session: true}\n")).toEqual([])
    expect(fields(`${SIMPLE}memory: {enabled: false, size: 4}\n`)).toEqual(["memory"])
    expect(fields(`${SIMPLE}cli:\n  server: {enabled: true, socketPath: a.sock, port: 9000}\n`)).toEqual(["cli.server.socketPath", "cli.server.port"])
    expect(fields(`${SIMPLE}cli:\n  server: {enabled: true, mode: tcp, port: 9000}\n`)).toEqual([])
    expect(fields(`${REACT}react: {thinkPrompt: Think.}\n`.replace("react: {maxSteps: 10}\n", ""))).toEqual(["systemPrompt"])
  })

  it("L034 names both sources", () => {
    const yaml = `${REACT.replace("localTools: [search, terminate]", "onlineTool: {a: [search], b: [search]}\n  localTools: [terminate]")}`
    expect(finding(yaml, "L034")?.message).toBe('tool "search" is declared by MCP server "a" and by MCP server "b"; a tool name must have one source')
  })
})

describe("options and output", () => {
  const noisy = `${REACT.replace("maxSteps: 10", "maxSteps: 60").replace("search, terminate", "search")}memory: {size: 2}\n`

  it("orders findings errors first, then by position", () => {
    expect(ids(noisy)).toEqual(["L004", "L010", "L008", "L032", "L015"])
  })

  it("filters by level, rules and ignore", () => {
    expect(ids(noisy, { level: "error" })).toEqual(["L004"])
    expect(ids(noisy, { level: "warn" })).toEqual(["L004", "L010", "L008"])
    expect(ids(noisy, { rules: ["L008", "l015"] })).toEqual(["L008", "L015"])
    expect(ids(noisy, { ignore: ["L004", "L032"] })).toEqual(["L010", "L008", "L015"])
    expect(lint(noisy, { level: "error" }).counts).toEqual({ error: 1, warn: 0, info: 0 })
  })

  it("prints the text format of the specification", () => {
    const text = formatLintResult(lint({ text: noisy, file: "agent.yml" }))
    const lines = text.split("\n")
    expect(lines[0]).toBe("lambdagent lint: agent.yml")
    expect(lines[1]).toBe("=".repeat(60))
    expect(lines[2]).toBe(
      "  ✗ [ERROR] L004 mcp.localTools (6:15): react agent without a terminate tool: it stops only when a thought names no tool or after maxSteps"
    )
    expect(lines[3]).toBe(`    Lambda: ${ruleById("L004")!.lambda}`)
    expect(lines[4]).toMatch(/^ {2}⚠ \[WARN\] {2}L010 react\.maxSteps \(4:19\): /)
    expect(lines).toContain("  ℹ [INFO]  summary: Agent 'agent' Lambda structure:")
    expect(lines[lines.length - 2]).toBe("─".repeat(60))
    expect(lines[lines.length - 1]).toBe("  1 error(s), 2 warning(s), 2 info(s)")
  })

  it("reports files that cannot be linted instead of throwing", () => {
    const result = lint({ text: "type: simple\nsystemPromt: x\n", file: "typo.yml" })
    expect(result.error?._tag).toBe("SchemaError")
    expect(result.findings).toEqual([])
    expect(formatLintResult(result)).toMatch(/✗ \[ERROR\] typo\.yml:2:1: systemPromt: unknown key/)
    expect(lint("missing/file.yml").error?._tag).toBe("ConfigError")
  })

  it("produces JSON that matches the report schema", () => {
    const report = lintReport([
      lint({ text: noisy, file: "a.yml" }),
      lint({ text: "type: simple\nsystemPromt: x\n", file: "b.yml" }),
      lint("examples/agents/react.yml")
    ])
    expect(LintReportSchema.safeParse(JSON.parse(JSON.stringify(report))).success).toBe(true)
    expect(report.counts).toEqual({ files: 3, failed: 1, error: 1, warn: 2, info: 4 })
    expect(report.exitCode).toBe(2)
    expect(report.files[0]!.findings[0]).toEqual({
      rule: "L004",
      level: "error",
      field: "mcp.localTools",
      path: ["mcp", "localTools"],
      line: 6,
      column: 15,
      message: "react agent without a terminate tool: it stops only when a thought names no tool or after maxSteps",
      lambda: ruleById("L004")!.lambda
    })
    expect(report.files[1]!.error).toMatchObject({ tag: "SchemaError", line: 2, column: 1, issues: [{ field: "systemPromt", suggestion: "systemPrompt" }] })
    expect(report.files[2]!.bounds).toEqual({ llmCalls: 12, toolCalls: 12 })
  })

  it("reports unbounded worst cases as null", () => {
    const report = lintReport([{ findings: [], counts: { error: 0, warn: 0, info: 0 }, bounds: { llmCalls: Infinity, toolCalls: 2 } }])
    expect(report.files[0]!.bounds).toEqual({ llmCalls: null, toolCalls: 2 })
  })
})
