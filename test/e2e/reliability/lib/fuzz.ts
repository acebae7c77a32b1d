/**
 * Fuzzed tool inputs: random and malformed argument objects for every tool, sent over a real MCP
 * client. Every reply must be a clean isError with a known code (never INTERNAL_ERROR) or a
 * result the client validated against the tool's output schema; no reply may exceed the byte
 * budget; refused calls change nothing; Object.prototype stays untouched.
 */
import fc from 'fast-check'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { BUILTIN_TOOLS } from '../../../../src/index.js'

/** Every built-in tool, from the registry: a new tool is fuzzed with no edit here. */
export const TOOLS: readonly string[] = BUILTIN_TOOLS.map((t) => t.name)
/** The tools that change data (not marked readOnlyHint): a refused call to one must change nothing. */
export const MUTATING: ReadonlySet<string> = new Set(BUILTIN_TOOLS.filter((t) => t.annotations.readOnlyHint !== true).map((t) => t.name))
export const KNOWN_CODES = new Set(['NOT_FOUND', 'INVALID_TRANSITION', 'INVALID_PARAMS', 'CONFLICT', 'CURSOR_EXPIRED', 'STORE_FILE', 'STORE_CLOSED', 'UNKNOWN_TOOL', 'CANCELLED', 'NO_BROWSER'])
export const BYTE_BUDGET = 256 * 1024

/** What a valid value of a field looks like; an enum and a page size carry their own bounds. */
type Kind =
  | 'annotationId'
  | 'sessionId'
  | 'questionId'
  | 'cursor'
  | 'message'
  | 'rev'
  | 'sinceRev'
  | 'timeoutMs'
  | 'boolean'
  | 'source'
  | { enum: readonly unknown[] }
  | { limit: number }
type Field = [name: string, kind: Kind, required: boolean]

interface JsonProperty {
  type?: string
  enum?: unknown[]
  maximum?: number
  description?: string
}

/** A field's kind from its JSON Schema (what a client sees) and its name. */
function kindOf(tool: string, name: string, p: JsonProperty): Kind {
  if (p.enum) return { enum: p.enum }
  if (p.type === 'boolean') return 'boolean'
  if (name === 'id') return /^session/i.test(p.description ?? '') ? 'sessionId' : 'annotationId'
  if (name === 'sessionId' || name === 'questionId' || name === 'cursor' || name === 'sinceRev' || name === 'timeoutMs') return name
  if (name === 'expectedRev') return 'rev'
  if (name === 'limit' && p.maximum !== undefined) return { limit: p.maximum }
  if (p.type === 'string') return 'message' // free text: a message, summary, reason or question
  if (p.type === 'object' && name === 'source') return 'source' // a file and a line (annotate)
  throw new Error(`the fuzz cannot make a value for ${tool}.${name} (${JSON.stringify(p)}): add its kind to kindOf`)
}

/** Every tool's input fields, in its schema's order, from its zod input. */
const FIELDS: ReadonlyMap<string, Field[]> = new Map(
  BUILTIN_TOOLS.map((tool) => {
    const schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, JsonProperty>; required?: string[] }
    const fields = Object.entries(schema.properties ?? {}).map(([name, p]): Field => [name, kindOf(tool.name, name, p), (schema.required ?? []).includes(name)])
    return [tool.name, fields]
  }),
)

/** The tools that wait (they take a timeoutMs): a call to one may be cut short by the client. */
export const WAITING: ReadonlySet<string> = new Set([...FIELDS].filter(([, fields]) => fields.some(([, kind]) => kind === 'timeoutMs')).map(([name]) => name))

/** A placeholder for a value taken from the live store when the case runs (ids, revs, cursors). */
class Live {
  constructor(
    readonly what: 'annotationId' | 'sessionId' | 'questionId' | 'annotationRev' | 'currentRev' | 'cursor',
    readonly n: number,
  ) {}
  toJSON(): string {
    return `<live ${this.what} ${this.n}>`
  }
}

const live = (what: Live['what']) => fc.nat({ max: 1_000 }).map((n) => new Live(what, n))

const controlChars = fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 20 })
const oddUnicode = fc.constantFrom(
  '\u0000',
  '\uFEFF',
  '\u202E\u0041\u0042', // right-to-left override
  '\uD800', // lone high surrogate
  '\uDC00x',
  'a\u0301\u0302\u0303', // combining marks
  '👩‍👩‍👧‍👦',
  '\u2028\u2029',
  '𝕳𝖊𝖑𝖑𝖔',
  'ﷺ',
  '\u200B\u200C\u200D',
)
/** Strings that cross every limit: 10 001 units, 100 000, one mega-unit. */
const hugeString = fc.constantFrom(10_001, 100_000, 1_000_000).chain((n) => fc.constantFrom('x', '\u0000', 'é', '😀').map((c) => c.repeat(Math.ceil(n / c.length))))
const weirdNumber = fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, -1, 0.5, 1e308, -1e308, 2 ** 53, 2 ** 53 + 2, Number.MIN_VALUE, 300_001, 1e21)
const protoKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'polluted', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__')

function deep(depth: number): unknown {
  let v: unknown = 'bottom'
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { a: v } : [v]
  return v
}

/** Any value of any type, malformed on purpose. */
const weird: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: weirdNumber },
  { weight: 2, arbitrary: controlChars },
  { weight: 2, arbitrary: oddUnicode },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, '', ' ', [], {}, '[]', '{}', 'null', '0', '-1', 'NaN') },
  { weight: 1, arbitrary: fc.constantFrom(deep(10), deep(2_000)) },
  { weight: 1, arbitrary: fc.tuple(protoKey, fc.jsonValue({ maxDepth: 1 })).map(([k, v]) => withOwn({}, k, v)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
)

const bogusCursor = fc.oneof(
  fc.constantFrom('c1.', 'c1.!!!', 'c2.abc', 'c1.' + Buffer.from('2026-01-01T00:00:00.000Z ann_x').toString('base64url'), 'c1.' + Buffer.from('not a key').toString('base64url'), 'c1.' + 'A'.repeat(997)),
  fc.string({ maxLength: 40 }).map((s) => 'c1.' + Buffer.from(s).toString('base64url')),
)

function valid(kind: Kind): fc.Arbitrary<unknown> {
  if (typeof kind === 'object') return 'enum' in kind ? fc.constantFrom(...kind.enum) : fc.oneof(fc.integer({ min: 1, max: 5 }), fc.constant(kind.limit))
  switch (kind) {
    case 'annotationId':
      return fc.oneof({ weight: 8, arbitrary: live('annotationId') }, { weight: 1, arbitrary: fc.constantFrom('ann_unknown', '__proto__', 'constructor', 'x'.repeat(128)) })
    case 'sessionId':
      return fc.oneof({ weight: 8, arbitrary: live('sessionId') }, { weight: 1, arbitrary: fc.constantFrom('ses_unknown', '__proto__', 'toString') })
    case 'questionId':
      return fc.oneof(live('questionId'), fc.constant('rep_unknown'))
    case 'boolean':
      return fc.boolean()
    case 'source':
      return fc.record({ file: fc.oneof(fc.constant('src/App.tsx'), fc.string({ maxLength: 30 })), line: fc.oneof(fc.integer({ min: 1, max: 500 }), fc.integer()) })
    case 'cursor':
      return fc.oneof(live('cursor'), bogusCursor)
    case 'message':
      return fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), oddUnicode, fc.constant('y'.repeat(10_000)))
    case 'rev':
      return fc.oneof(live('annotationRev'), fc.nat({ max: 50 }))
    case 'sinceRev':
      return fc.oneof(live('currentRev'), fc.nat({ max: 2_000 }))
    case 'timeoutMs':
      // Small, so waits stay bounded; a missing timeoutMs (default 25 s) is cut short by the client.
      return fc.constantFrom(1, 1, 2, 5)
  }
}

/** Set an own, enumerable property, even `__proto__`. */
function withOwn<T extends object>(obj: T, key: string, value: unknown): T {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
  return obj
}

export interface FuzzCase {
  tool: string
  args: unknown
}

/** 0…99, uniformly (fast-check otherwise favours the bounds). */
const percent = fc.noBias(fc.integer({ min: 0, max: 99 }))

const argsFor = (tool: string): fc.Arbitrary<unknown> => {
  const fields = FIELDS.get(tool) ?? []
  const fieldArbs = fields.map(([name, kind, required]) =>
    fc
      .record({
        present: percent,
        good: percent,
        validValue: valid(kind),
        weirdValue: weird,
      })
      .map(({ present, good, validValue, weirdValue }) => {
        const omit = required ? present < 4 : kind === 'timeoutMs' ? present < 1 : present < 40
        return omit ? undefined : ([name, good < 88 ? validValue : weirdValue] as const)
      }),
  )
  const extras = fc.array(fc.tuple(fc.oneof(protoKey, fc.string({ maxLength: 12 }), hugeString.map((s) => s.slice(0, 300_000))), weird), { maxLength: 2 })
  const object = fc.tuple(fc.tuple(...fieldArbs), percent, extras).map(([entries, pExtra, extra]) => {
    const args: Record<string, unknown> = {}
    for (const entry of entries) if (entry) withOwn(args, entry[0], entry[1])
    if (pExtra < 8) for (const [k, v] of extra) withOwn(args, k, v)
    return args
  })
  return fc.oneof({ weight: 30, arbitrary: object }, { weight: 1, arbitrary: fc.oneof(weird, fc.constantFrom(undefined, null, [], 'args', 42)) })
}

export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.oneof(
  { weight: 30, arbitrary: fc.constantFrom(...TOOLS).chain((tool) => argsFor(tool).map((args) => ({ tool, args }))) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.oneof(fc.string({ maxLength: 20 }), protoKey, fc.constantFrom('', ' list_sessions', 'LIST_SESSIONS', 'x'.repeat(100_000))), argsFor('list_sessions')).map(([tool, args]) => ({ tool, args })),
  },
)

// ---- running cases ----------------------------------------------------------------------------

/** Where live values come from: the store behind the server (in-process or a reader of its file). */
export interface LiveSource {
  annotationIds(): string[]
  sessionIds(): string[]
  questionIds(): string[]
  annotationRev(id: string | undefined): number
  currentRev(): number
  cursors(): string[]
}

export function resolveLive(value: unknown, src: LiveSource, lastAnnotation: { id?: string }): unknown {
  if (value instanceof Live) {
    const pick = <T>(list: T[], fallback: T): T => (list.length === 0 ? fallback : list[value.n % list.length]!)
    switch (value.what) {
      case 'annotationId':
        return (lastAnnotation.id = pick(src.annotationIds(), 'ann_none'))
      case 'sessionId':
        return pick(src.sessionIds(), 'ses_none')
      case 'questionId':
        return pick(src.questionIds(), 'rep_none')
      case 'annotationRev':
        return src.annotationRev(lastAnnotation.id)
      case 'currentRev':
        return Math.max(0, src.currentRev() - (value.n % 3))
      case 'cursor':
        return pick(src.cursors(), 'c1.none')
    }
  }
  if (Array.isArray(value)) return value.map((v) => resolveLive(v, src, lastAnnotation))
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {}
    // Ids first, so an expectedRev can follow the id it belongs to.
    const keys = Object.keys(value).sort((a, b) => Number(b === 'id') - Number(a === 'id'))
    for (const k of keys) withOwn(out, k, resolveLive((value as Record<string, unknown>)[k], src, lastAnnotation))
    return out
  }
  return value
}

export type Verdict =
  | { kind: 'result'; result: CallToolResult; bytes: number }
  | { kind: 'error'; code: string; result: CallToolResult; bytes: number }
  | { kind: 'protocol'; code: number; message: string }
  | { kind: 'aborted' }

/**
 * Send one case. Non-object arguments go as a raw tools/call (the SDK server answers those with
 * JSON-RPC InvalidParams). A case that may wait for the 25 s default is cut short by the client.
 */
export async function send(client: Client, tool: string, args: unknown, mayWaitLong: boolean): Promise<Verdict> {
  const signal = mayWaitLong ? AbortSignal.timeout(30) : undefined
  try {
    let result: CallToolResult
    if (typeof args === 'object' && args !== null && !Array.isArray(args)) {
      result = (await client.callTool({ name: tool, arguments: args as Record<string, unknown> }, undefined, { signal })) as CallToolResult
    } else {
      result = (await client.request({ method: 'tools/call', params: { name: tool, arguments: args as Record<string, unknown> } }, CallToolResultSchema, { signal })) as CallToolResult
    }
    const bytes = Buffer.byteLength(JSON.stringify(result))
    if (result.isError) {
      const code = (result._meta as Record<string, { code?: unknown } | undefined> | undefined)?.['marginalia/error']?.code
      return { kind: 'error', code: typeof code === 'string' ? code : `(no code: ${JSON.stringify(result).slice(0, 200)})`, result, bytes }
    }
    return { kind: 'result', result, bytes }
  } catch (e) {
    if (signal?.aborted) return { kind: 'aborted' }
    const code = (e as { code?: unknown }).code
    return { kind: 'protocol', code: typeof code === 'number' ? code : Number.NaN, message: e instanceof Error ? e.message : String(e) }
  }
}

export interface FuzzFigures {
  cases: number
  byTool: Record<string, number>
  results: number
  errors: Record<string, number>
  protocolErrors: number
  aborted: number
  mutations: number
  maxReplyBytes: number
}

export function newFigures(): FuzzFigures {
  return { cases: 0, byTool: Object.create(null) as Record<string, number>, results: 0, errors: Object.create(null) as Record<string, number>, protocolErrors: 0, aborted: 0, mutations: 0, maxReplyBytes: 0 }
}

/** A description of a case for failure messages (long strings shortened). */
export function describeCase(tool: string, args: unknown): string {
  let text: string
  try {
    text = JSON.stringify(args, (_k, v: unknown) => (typeof v === 'string' && v.length > 60 ? `${v.slice(0, 30)}…(${v.length})` : typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))
  } catch {
    text = String(args)
  }
  return `${tool.length > 60 ? `${tool.slice(0, 30)}…(${tool.length})` : tool} ${text?.slice(0, 2_000)}`
}

/** What Object.prototype and friends look like now; compare before and after a run. */
export function prototypeFingerprint(): string {
  const own = (o: object) => Reflect.ownKeys(o).map(String).sort().join(',')
  return [own(Object.prototype), own(Array.prototype), own(Function.prototype), own(String.prototype), String(Object.getPrototypeOf({}) === Object.prototype)].join('|')
}

export function polluted(): boolean {
  const probe = {} as Record<string, unknown>
  return probe.polluted !== undefined || probe.id !== undefined || probe.sessionId !== undefined || Object.getPrototypeOf(probe) !== Object.prototype
}
