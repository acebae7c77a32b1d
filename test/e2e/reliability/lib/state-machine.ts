/**
 * Property: random command sequences (valid and invalid, on known and unknown ids, with
 * expectedRev, concurrent groups, archive and delete) give the same results against the store
 * as against the reference model in model.ts, with one event per successful mutation and
 * every query consistent with a brute-force recomputation. Shared by the CI test and `npm run stress`.
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import type { Annotation, IdKind, Session, Store, StoreEvent } from '../../../../src/index.js'
import { Model, STATUSES, type Call, type MAnnotation, type MEvent, type MSession, type Status } from './model.js'

// ---- the command language -------------------------------------------------------------------

/** A reference to a record: the n-th one ever created (modulo), or a literal id that was never created. */
export type Ref = { known: number } | { literal: string }
export type RevSpec = 'current' | 'stale' | number | undefined

export type Step =
  | { op: 'createSession'; url: string; name?: unknown }
  | { op: 'addAnnotation'; session: Ref; comment: string; extra: Record<string, unknown>; extraValid: boolean }
  | { op: 'acknowledge' | 'resolve' | 'reopen' | 'dismiss'; target: Ref; text?: string; rev: RevSpec }
  | { op: 'reply'; target: Ref; author: string; message: string; kind?: string; rev: RevSpec }
  | { op: 'delete'; target: Ref; rev: RevSpec }
  | { op: 'archive'; olderThanMs: number }
  | { op: 'tick'; ms: number }
  | { op: 'page'; query: number; limit: number; cursorFrom: number }
  | { op: 'concurrent'; steps: Step[] }

const blank = fc.constantFrom('', ' ', '\t\n ', '\u3000', '\uFEFF', '\u00a0')
const text = fc.oneof(
  { weight: 8, arbitrary: fc.string({ minLength: 1, maxLength: 16 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }) },
  { weight: 1, arbitrary: blank },
  // Long texts as a short token (so a counterexample stays readable), expanded by expand().
  { weight: 1, arbitrary: fc.constantFrom('<x*10000>', '<y*10001>', '<é*10001>') },
)

/** '<c*n>' → c repeated n times; anything else unchanged. */
function expand<T>(value: T): T {
  if (typeof value !== 'string') return value
  const m = /^<(.)\*(\d+)>$/u.exec(value)
  return (m ? m[1]!.repeat(Number(m[2])) : value) as T
}
const ref = fc.oneof(
  { weight: 8, arbitrary: fc.nat({ max: 40 }).map((known): Ref => ({ known })) },
  { weight: 1, arbitrary: fc.constantFrom('', 'ann_nope', '__proto__', 'constructor', 'toString', 'ses_0', 'z'.repeat(300)).map((literal): Ref => ({ literal })) },
)
const revSpec: fc.Arbitrary<RevSpec> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.constant('current' as const) },
  { weight: 1, arbitrary: fc.constant('stale' as const) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 0, 0.5, 3, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY) },
)
const extra = fc.oneof(
  ...[
    {},
    { intent: 'fix' },
    { severity: 'blocking', url: 'http://localhost:5173/a?b=c' },
    { element: { selector: 'main > button.primary', text: 'Go', rect: { x: 1, y: 2, width: 3, height: 4 } } },
    { viewport: { width: 800, height: 600 }, source: { file: 'src/App.tsx', line: 12 } },
    { selectedText: 'ünïcødé ✓ 👍🏽', intent: 'question', severity: 'suggestion' },
  ].map((e) => fc.constant({ extra: e, extraValid: true })),
  ...[
    { intent: 'bogus' },
    { element: { selector: '   ' } },
    { viewport: { width: -1, height: 2 } },
    { unexpected: 1 },
    { element: { selector: 'a', rect: { x: Number.NaN, y: 0, width: 1, height: 1 } } },
    { severity: null },
  ].map((e) => fc.constant({ extra: e as Record<string, unknown>, extraValid: false })),
)

function stepArb(depth: number): fc.Arbitrary<Step> {
  const statusOp = fc.record({
    op: fc.constantFrom('acknowledge' as const, 'resolve' as const, 'reopen' as const, 'dismiss' as const),
    target: ref,
    text: fc.option(text, { nil: undefined }),
    rev: revSpec,
  })
  const arbs: fc.WeightedArbitrary<Step>[] = [
    { weight: 1, arbitrary: fc.record({ op: fc.constant('createSession' as const), url: fc.oneof(fc.constant('http://localhost:5173/'), text), name: fc.option(fc.oneof(text, fc.constant(42 as unknown)), { nil: undefined }) }) },
    { weight: 5, arbitrary: fc.tuple(ref, text, extra).map(([session, comment, e]): Step => ({ op: 'addAnnotation', session, comment, ...e })) },
    { weight: 8, arbitrary: statusOp },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('reply' as const),
        target: ref,
        author: fc.constantFrom('agent', 'human', 'human', 'robot'),
        message: text,
        kind: fc.option(fc.constantFrom('message', 'question', 'question', 'bogus'), { nil: undefined }),
        rev: revSpec,
      }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), target: ref, rev: revSpec }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('archive' as const), olderThanMs: fc.constantFrom(0, 1_000, 5_000, 1e9, -1, Number.NaN) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('tick' as const), ms: fc.constantFrom(0, 1, 1_000, 60_000) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('page' as const), query: fc.nat({ max: 50 }), limit: fc.integer({ min: 1, max: 4 }), cursorFrom: fc.nat({ max: 20 }) }) },
  ]
  if (depth === 0) {
    const inner = stepArb(1).filter((s) => s.op !== 'archive' && s.op !== 'tick' && s.op !== 'page')
    arbs.push({ weight: 2, arbitrary: fc.array(inner, { minLength: 2, maxLength: 6 }).map((steps): Step => ({ op: 'concurrent', steps })) })
  }
  return fc.oneof(...arbs)
}

/** Sequences that start with a session and an annotation or two, so most commands have a target. */
export function programArb(maxLength: number): fc.Arbitrary<Step[]> {
  const prelude: Step[] = [
    { op: 'createSession', url: 'http://localhost:5173/' },
    { op: 'addAnnotation', session: { known: 0 }, comment: 'first', extra: {}, extraValid: true },
  ]
  return fc.array(stepArb(0), { maxLength, size: 'max' }).map((steps) => [...prelude, ...steps])
}

// ---- deterministic clock and ids --------------------------------------------------------------

export interface Harness {
  clock: () => Date
  ids: (kind: IdKind) => string
  advance(ms: number): void
  now(): string
}

/** A clock that moves only when told (so many records share a timestamp) and ids that do not sort in creation order. */
export function harness(seed: number): Harness {
  let t = Date.UTC(2026, 0, 1, 12, 0, 0)
  let n = 0
  let x = seed >>> 0 || 1
  const prefix: Record<IdKind, string> = { session: 'ses', annotation: 'ann', reply: 'rep', identity: 'idn', capture: 'cap' }
  return {
    clock: () => new Date(t),
    ids: (kind) => {
      x ^= x << 13
      x ^= x >>> 17
      x ^= x << 5
      return `${prefix[kind]}_${((x >>> 0) % 1296).toString(36).padStart(2, '0')}${(++n).toString(36)}`
    },
    advance: (ms) => void (t += ms),
    now: () => new Date(t).toISOString(),
  }
}

// ---- running a program ------------------------------------------------------------------------

export interface RunFigures {
  commands: number
  succeeded: number
  refused: number
  events: number
  queryChecks: number
}

export interface Outcome {
  sessions: Session[]
  annotations: Annotation[]
  events: StoreEvent[]
  rev: number
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown }

function codeOf(error: unknown): string {
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : `thrown: ${String(error)}`
}

export class Runner {
  readonly model = new Model()
  readonly figures: RunFigures = { commands: 0, succeeded: 0, refused: 0, events: 0, queryChecks: 0 }
  private readonly events: StoreEvent[] = []
  private readonly cursors: string[] = []
  private readonly sub: { unsubscribe(): void }

  constructor(
    private readonly store: Store,
    private readonly h: Harness,
    private readonly options: { checkEvery: number },
  ) {
    this.sub = store.changes$.subscribe((e) => this.events.push(e))
  }

  async run(program: Step[]): Promise<Outcome> {
    let i = 0
    for (const step of program) {
      await this.step(step)
      if (++i % this.options.checkEvery === 0) this.checkQueries()
    }
    this.checkQueries()
    this.sub.unsubscribe()
    return { sessions: this.store.listSessions(), annotations: this.store.listAnnotations(), events: this.store.changesSince(0), rev: this.store.rev }
  }

  private resolveRef(r: Ref, pool: readonly string[]): string {
    if ('literal' in r) return r.literal
    return pool.length === 0 ? 'ann_none_yet' : pool[r.known % pool.length]!
  }

  private resolveRev(spec: RevSpec, id: string): unknown {
    if (spec === 'current' || spec === 'stale') {
      const a = this.model.annotations.get(id)
      const current = a?.rev ?? 1
      return spec === 'current' ? current : current - 1
    }
    return spec
  }

  /** Turn a step into a concrete call, using the model to pick targets. */
  private callOf(step: Exclude<Step, { op: 'tick' | 'page' | 'concurrent' }>): Call {
    const m = this.model
    switch (step.op) {
      case 'createSession':
        return { op: 'createSession', url: expand(step.url), name: expand(step.name) }
      case 'addAnnotation':
        return { op: 'addAnnotation', sessionId: this.resolveRef(step.session, m.everSessions), comment: expand(step.comment), extra: step.extra, extraValid: step.extraValid }
      case 'archive':
        return { op: 'archive', olderThanMs: step.olderThanMs }
      case 'reply': {
        const id = this.resolveRef(step.target, m.everAnnotations)
        return { op: 'reply', id, author: step.author, message: expand(step.message), kind: step.kind, expectedRev: this.resolveRev(step.rev, id) }
      }
      case 'delete': {
        const id = this.resolveRef(step.target, m.everAnnotations)
        return { op: 'delete', id, expectedRev: this.resolveRev(step.rev, id) }
      }
      default: {
        const id = this.resolveRef(step.target, m.everAnnotations)
        return { op: step.op, id, text: expand(step.text), expectedRev: this.resolveRev(step.rev, id) }
      }
    }
  }

  private invoke(call: Call): Promise<unknown> {
    const s = this.store
    const rev = (call as { expectedRev?: unknown }).expectedRev as number | undefined
    switch (call.op) {
      case 'createSession':
        return s.createSession({ url: call.url as string, ...(call.name !== undefined ? { name: call.name as string } : {}) })
      case 'addAnnotation':
        return s.addAnnotation({ sessionId: call.sessionId as string, comment: call.comment as string, ...call.extra })
      case 'archive':
        return s.archive({ olderThanMs: call.olderThanMs })
      case 'acknowledge':
        return s.acknowledge(call.id as string, { message: call.text as string | undefined, expectedRev: rev })
      case 'resolve':
        return s.resolve(call.id as string, { summary: call.text as string | undefined, expectedRev: rev })
      case 'reopen':
        return s.reopen(call.id as string, { message: call.text as string | undefined, expectedRev: rev })
      case 'dismiss':
        return s.dismiss(call.id as string, { reason: call.text as string, expectedRev: rev })
      case 'reply':
        return s.reply(call.id as string, { author: call.author as 'agent', message: call.message as string, kind: call.kind as 'question' | undefined, expectedRev: rev })
      case 'delete':
        return s.deleteAnnotation(call.id as string, { expectedRev: rev })
    }
  }

  private async step(step: Step): Promise<void> {
    if (step.op === 'tick') return this.h.advance(step.ms)
    if (step.op === 'page') return this.checkPage(step)
    const group = step.op === 'concurrent' ? step.steps : [step]
    // Issue every call of the group before awaiting any: the store commits them together, in call order.
    const calls = group.map((s) => this.callOf(s as Exclude<Step, { op: 'tick' | 'page' | 'concurrent' }>))
    const firstEvent = this.events.length
    const revBefore = this.store.rev
    const settled: Promise<Settled>[] = calls.map((call) =>
      this.invoke(call).then(
        (value): Settled => ({ ok: true, value }),
        (error: unknown): Settled => ({ ok: false, error }),
      ),
    )
    const results = await Promise.all(settled)
    const now = this.h.now()
    const expectedEvents: MEvent[] = []
    results.forEach((result, i) => {
      const call = calls[i]!
      const predicted = this.model.predict(call, now)
      const context = `${JSON.stringify(call, (_k, v: unknown) => (typeof v === 'string' && v.length > 40 ? `${v.slice(0, 20)}…(${v.length})` : v))}`
      this.figures.commands++
      if (!predicted.ok) {
        expect(result.ok, `the store accepted a call the model refuses (${predicted.code}): ${context}`).toBe(false)
        if (!result.ok) expect(codeOf(result.error), context).toBe(predicted.code)
        this.figures.refused++
        return
      }
      if (!result.ok) expect.fail(`the store refused (${codeOf(result.error)}: ${String((result.error as Error)?.message)}) a call the model accepts: ${context}`)
      const value = result.value as { id?: string; rev?: number; archived?: number }
      const newId = call.op === 'createSession' || call.op === 'addAnnotation' ? value.id : undefined
      const evs = this.model.apply(call, now, newId)
      expectedEvents.push(...evs)
      this.figures.succeeded++
      // The returned record is the record as the model has it now.
      if (call.op === 'createSession') expect(sessionView(value as Session), context).toEqual(this.model.sessions.get(newId!))
      else if (call.op === 'delete') expect(value.id, context).toBe(call.id)
      else if (call.op === 'archive') expect(value.archived, context).toBe(evs.length)
      else expect(annotationView(value as Annotation), context).toEqual(this.model.annotations.get(value.id!))
    })
    const actual = this.events.slice(firstEvent)
    // Exactly one event per successful mutation, none for refused ones, consecutive revs, stamped now.
    expect(actual.map(eventView)).toEqual(expectedEvents)
    actual.forEach((e, i) => {
      expect(e.rev).toBe(revBefore + i + 1)
      expect(e.at).toBe(now)
    })
    expect(this.store.rev).toBe(this.model.rev)
    this.figures.events += actual.length
  }

  /** A page from a cursor remembered earlier: positions stay valid while records change. */
  private checkPage(step: Extract<Step, { op: 'page' }>): void {
    const queries = this.queries()
    const query = queries[step.query % queries.length]!
    const after = this.cursors.length > 0 && step.cursorFrom % 3 !== 0 ? this.cursors[step.cursorFrom % this.cursors.length] : undefined
    const page = this.store.pageAnnotations(query, { after, limit: step.limit })
    const all = this.model.annotationList(query)
    const rest = after === undefined ? all : all.filter((a) => keyOf(a) > after)
    expect(page.items.map(annotationView)).toEqual(rest.slice(0, step.limit))
    expect(page.total).toBe(all.length)
    expect(page.hasMore).toBe(rest.length > step.limit)
    if (page.lastKey !== undefined) this.cursors.push(page.lastKey)
    this.figures.queryChecks++
  }

  private queries(): { sessionId?: string; status?: Status }[] {
    const out: { sessionId?: string; status?: Status }[] = [{}]
    for (const status of STATUSES) out.push({ status })
    for (const sessionId of this.model.sessions.keys()) {
      out.push({ sessionId })
      for (const status of STATUSES) out.push({ sessionId, status })
    }
    return out
  }

  /** Every query against a brute-force recomputation from the model. */
  checkQueries(): void {
    const { store, model } = this
    this.figures.queryChecks++
    expect(store.rev).toBe(model.rev)
    expect(store.listSessions().map(sessionView)).toEqual(model.sessionList())
    expect(store.listAnnotations().map(annotationView)).toEqual(model.annotationList())
    expect(store.getAllPending().map(annotationView)).toEqual(model.annotationList({ status: 'pending' }))
    expect(store.countPending()).toBe(model.annotationList({ status: 'pending' }).length)
    for (const s of model.sessions.values()) {
      const session = store.getSession(s.id)
      expect(sessionView(session)).toEqual(s)
      expect(session.annotations.map(annotationView)).toEqual(model.annotationList({ sessionId: s.id }))
      expect(store.getPending(s.id).map(annotationView)).toEqual(model.annotationList({ sessionId: s.id, status: 'pending' }))
      expect(store.countPending(s.id)).toBe(model.annotationList({ sessionId: s.id, status: 'pending' }).length)
    }
    for (const query of this.queries()) {
      const all = model.annotationList(query)
      expect(store.listAnnotations(query).map(annotationView)).toEqual(all)
      // Walk every page with a small limit: the pages concatenate to the whole list.
      for (const limit of [1, 3]) {
        const walked: MAnnotation[] = []
        let after: string | undefined
        for (let guard = 0; ; guard++) {
          expect(guard).toBeLessThanOrEqual(all.length + 1)
          const page = store.pageAnnotations(query, { after, limit })
          expect(page.total).toBe(all.length)
          expect(page.items.length).toBeLessThanOrEqual(limit)
          walked.push(...page.items.map(annotationView))
          if (!page.hasMore) break
          expect(page.items.length).toBe(limit)
          after = page.lastKey
          if (after !== undefined) this.cursors.push(after)
        }
        expect(walked).toEqual(all)
      }
    }
    for (const id of model.everAnnotations) {
      const a = model.annotations.get(id)
      if (a) expect(annotationView(store.getAnnotation(id))).toEqual(a)
      else expect(() => store.getAnnotation(id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
    }
    for (const unknown of ['ses_missing', '__proto__', 'constructor']) {
      expect(() => store.getPending(unknown)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
      expect(() => store.getSession(unknown)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
      expect(() => store.pageAnnotations({ sessionId: unknown })).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
    }
    expect(store.openQuestions().map((q) => ({ id: q.annotation.id, question: replyView(q.question) }))).toEqual(model.openQuestions())
    // Reply ids are unique across the store.
    const replyIds = store.listAnnotations().flatMap((a) => a.replies.map((r) => r.id))
    expect(new Set(replyIds).size).toBe(replyIds.length)
    // The change log is every event seen on changes$, in rev order.
    expect(store.changesSince(0)).toEqual(this.events)
    expect(this.events.map((e) => e.rev)).toEqual(Array.from({ length: model.rev }, (_, i) => i + 1))
  }
}

function keyOf(a: { createdAt: string; id: string }): string {
  return `${a.createdAt} ${a.id}`
}

function replyView(r: { author: string; message: string; kind?: string; createdAt: string }): Record<string, unknown> {
  const out: Record<string, unknown> = { author: r.author, message: r.message, createdAt: r.createdAt }
  if (r.kind !== undefined) out.kind = r.kind
  return out
}

/** An annotation as the model keeps it: reply ids (opaque) left out. */
function annotationView(a: Annotation): MAnnotation {
  return { ...a, replies: a.replies.map(replyView) } as unknown as MAnnotation
}

function sessionView(s: Session): MSession {
  const { annotations: _a, ...rest } = s as Session & { annotations?: unknown }
  return rest as MSession
}

function eventView(e: StoreEvent): MEvent {
  const out: MEvent = { type: e.type, sessionId: e.sessionId }
  if ('annotationId' in e) out.annotationId = e.annotationId
  if ('action' in e) out.action = e.action
  if ('from' in e) out.from = e.from
  if ('to' in e) out.to = e.to
  if ('reply' in e && e.reply) {
    const { id: _id, createdAt: _c, ...shown } = e.reply
    out.reply = shown
  }
  return out
}
