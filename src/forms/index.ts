/**
 * The registry of every form of the language. The `Term` type is the union of the registry's
 * node types, and the parser tries object keys in registry order (the first form whose key an
 * object has wins), so the order below is part of the syntax.
 *
 * Adding a form: write its module (see `docs/contributing.md`), add its node to {@link AnyNode}
 * and its form to {@link forms}; the type checker holds the two lists to each other.
 */
import { type Ask, askForm } from "./ask.ts"
import { type Channels, channelsForm, type Receive, receiveForm, type Send, sendForm } from "./channels.ts"
import { type Compose, composeForm } from "./compose.ts"
import { type If, ifForm } from "./conditional.ts"
import type { EventsOf, Form } from "./Form.ts"
import { type GroupChat, groupChatForm } from "./groupchat.ts"
import { type Guard, guardForm } from "./guard.ts"
import { type Handoff, handoffForm } from "./handoff.ts"
import { type App, appForm, type Lam, lamForm, type Var, varForm } from "./lambda.ts"
import { type Cons, consForm, type Fold, foldForm, type List, listForm, type Nil, nilForm } from "./lists.ts"
import { type Lit, litForm } from "./literal.ts"
import { type Llm, llmForm } from "./llm.ts"
import { type Loop, loopForm } from "./loop.ts"
import { type Memory, memoryForm } from "./memory.ts"
import { type CodeOf, codeOfForm, type Continue, continueForm, type Eval, evalForm, type Quote, quoteForm, type Self, selfForm } from "./meta.ts"
import { type Binary, binaryForm, type Unary, unaryForm } from "./operators.ts"
import { type Pair, pairForm } from "./pair.ts"
import { type Par, parForm } from "./par.ts"
import { type React, reactForm } from "./react.ts"
import { type Route, routeForm } from "./route.ts"
import { type Tool, toolForm } from "./tool.ts"

/** A term: the node of any form. */
export type AnyNode =
  | Lit
  | List
  | Var
  | Lam
  | App
  | Binary
  | Unary
  | If
  | Nil
  | Cons
  | Pair
  | Fold
  | Quote
  | Eval
  | CodeOf
  | Self
  | Continue
  | Llm
  | Tool
  | Compose
  | Loop
  | Route
  | Par
  | Guard
  | Memory
  | React
  | GroupChat
  | Handoff
  | Ask
  | Channels
  | Send
  | Receive

type Registry = { readonly [K in AnyNode["_tag"]]: Form<Extract<AnyNode, { readonly _tag: K }>, string> }

export const forms = {
  Lit: litForm,
  List: listForm,
  Var: varForm,
  Lam: lamForm,
  App: appForm,
  Binary: binaryForm,
  Unary: unaryForm,
  If: ifForm,
  Nil: nilForm,
  Cons: consForm,
  Pair: pairForm,
  Fold: foldForm,
  Quote: quoteForm,
  Eval: evalForm,
  CodeOf: codeOfForm,
  Self: selfForm,
  Continue: continueForm,
  Llm: llmForm,
  Tool: toolForm,
  Compose: composeForm,
  Loop: loopForm,
  Route: routeForm,
  Par: parForm,
  Guard: guardForm,
  Memory: memoryForm,
  React: reactForm,
  GroupChat: groupChatForm,
  Handoff: handoffForm,
  Ask: askForm,
  Channels: channelsForm,
  Send: sendForm,
  Receive: receiveForm
} as const satisfies Registry

type Forms = typeof forms

/** The trace event kinds the forms record. */
export type FormEvent = EventsOf<Forms[keyof Forms]>

/** The form of a node. */
export const formOf = <N extends AnyNode>(t: N): Form<N, string> => (forms as Registry)[t._tag] as unknown as Form<N, string>

/** The form introduced by each object key. */
export const formByKey: ReadonlyMap<string, { readonly form: Form<AnyNode, string>; readonly rank: number }> = new Map(
  Object.values(forms).flatMap((form, rank) => form.keys.map((key) => [key, { form: form as unknown as Form<AnyNode, string>, rank }] as const))
)
