/** Running the fuzz cases: in-process over the SDK's InMemoryTransport, or against the built CLI over stdio. */
import fc from 'fast-check'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { expect } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { createMemoryStore, openStore, type Store } from '../../../../src/index.js'
import { orderKey } from '../../../../src/store/store.js'
import { encodeCursor } from '../../../../src/store/cursor.js'
import { connect } from '../../../helpers/mcp.js'
import { ChildTransport } from '../../../helpers/child-transport.js'
import { tempDir } from '../../../helpers/store.js'
import {
  BYTE_BUDGET,
  KNOWN_CODES,
  MUTATING,
  TOOLS,
  WAITING,
  describeCase,
  fuzzCase,
  newFigures,
  polluted,
  prototypeFingerprint,
  resolveLive,
  send,
  type FuzzCase,
  type FuzzFigures,
  type LiveSource,
  type Verdict,
} from './fuzz.js'

/** A store with a few sessions, annotations in every status, replies, open and answered questions. */
async function populate(store: Store): Promise<void> {
  const sessions = []
  for (let s = 0; s < 3; s++) sessions.push(await store.createSession({ url: `http://localhost:5173/page/${s}`, name: `page ${s}` }))
  for (let i = 0; i < 30; i++) {
    const a = await store.addAnnotation({
      sessionId: sessions[i % 3]!.id,
      comment: `annotation ${i} ${'ünïcødé '.repeat(i % 4)}`,
      element: { selector: `main > div:nth-child(${i})`, text: `text ${i}` },
      intent: 'fix',
    })
    if (i % 5 === 1) await store.acknowledge(a.id, { message: 'on it' })
    if (i % 5 === 2) await store.resolve(a.id, { summary: 'done' })
    if (i % 5 === 3) await store.dismiss(a.id, { reason: 'by design' })
    if (i % 4 === 0) await store.reply(a.id, { author: 'agent', message: 'Which one?', kind: 'question' })
    if (i % 8 === 0) await store.reply(a.id, { author: 'human', message: 'The blue one' })
  }
}

function sourceOf(store: Store): LiveSource {
  return {
    annotationIds: () => store.listAnnotations().map((a) => a.id),
    sessionIds: () => store.listSessions().map((s) => s.id),
    questionIds: () => store.listAnnotations().flatMap((a) => a.replies.filter((r) => r.kind === 'question').map((r) => r.id)),
    annotationRev: (id) => {
      try {
        return id === undefined ? 0 : store.getAnnotation(id).rev
      } catch {
        return 0
      }
    },
    currentRev: () => store.rev,
    cursors: () => store.listAnnotations().filter((_, i) => i % 3 === 0).map((a) => encodeCursor(orderKey(a))),
  }
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The checks every reply must pass, wherever it came from. */
function checkVerdict(verdict: Verdict, c: FuzzCase, args: unknown, figures: FuzzFigures): void {
  const what = (): string => describeCase(c.tool, args)
  figures.cases++
  const bucket = TOOLS.includes(c.tool) ? c.tool : '(unknown tool)'
  figures.byTool[bucket] = (figures.byTool[bucket] ?? 0) + 1
  switch (verdict.kind) {
    case 'protocol':
      // Only arguments that are not an object are refused at the JSON-RPC level, as InvalidParams.
      check(!isPlainObject(args) && verdict.code === -32602, () => `protocol error ${verdict.code} ${verdict.message.slice(0, 300)} for ${what()}`)
      figures.protocolErrors++
      return
    case 'aborted':
      check(WAITING.has(c.tool), () => `a call to ${c.tool} hung: ${what()}`)
      figures.aborted++
      return
    case 'error':
      check(KNOWN_CODES.has(verdict.code), () => `unexpected error code ${verdict.code}: ${verdict.result.content?.[0]?.type === 'text' ? verdict.result.content[0].text.slice(0, 300) : ''} for ${what()}`)
      check(verdict.bytes <= BYTE_BUDGET, () => `error reply of ${verdict.bytes} bytes for ${what()}`)
      figures.errors[verdict.code] = (figures.errors[verdict.code] ?? 0) + 1
      figures.maxReplyBytes = Math.max(figures.maxReplyBytes, verdict.bytes)
      return
    case 'result':
      check(verdict.bytes <= BYTE_BUDGET, () => `reply of ${verdict.bytes} bytes for ${what()}`)
      check(typeof verdict.result.structuredContent === 'object', () => `no structured content for ${what()}`)
      figures.results++
      figures.maxReplyBytes = Math.max(figures.maxReplyBytes, verdict.bytes)
  }
}

/** A capture that found no browser (or was given up): its request was written, though no record changed. */
function askedForPicture(tool: string, verdict: { kind: string; code?: unknown }): boolean {
  return tool === 'capture' && (verdict.kind === 'aborted' || (verdict.kind === 'error' && verdict.code === 'NO_BROWSER'))
}

/** Assert, computing the message only on failure (describing a case with a 1 MB string is slow). */
function check(ok: boolean, message: () => string): void {
  if (!ok) expect.fail(message())
}

export interface FuzzSize {
  seed: number
  cases: number
}

/** In-process: a real SDK client on the InMemoryTransport, with the store in reach for exact state checks. */
export async function fuzzInProcess(size: FuzzSize): Promise<FuzzFigures> {
  const store = createMemoryStore()
  await populate(store)
  const src = sourceOf(store)
  const mcp = await connect(store)
  const figures = newFigures()
  const fingerprint = prototypeFingerprint()
  try {
    await fc.assert(
      fc.asyncProperty(fuzzCase, async (c) => {
        const args = resolveLive(c.args, src, {})
        const stateBefore = store.getState()
        const revBefore = store.rev
        const verdict = await send(mcp.client, c.tool, args, WAITING.has(c.tool))
        checkVerdict(verdict, c, args, figures)
        const what = (): string => describeCase(c.tool, args)
        const delta = store.rev - revBefore
        if (verdict.kind === 'result' && MUTATING.has(c.tool)) {
          // annotate on a page without a session starts one first: two events.
          check(delta === 1 || (c.tool === 'annotate' && delta === 2), () => `a successful ${c.tool} is one mutation, rev moved by ${delta}: ${what()}`)
          figures.mutations += delta
        } else if ((verdict.kind === 'aborted' && c.tool === 'ask') || askedForPicture(c.tool, verdict)) {
          // The question (or the capture request: an event that changes no record) may have been posted before the call gave up.
          check(delta <= 1, () => `rev moved by ${delta}: ${what()}`)
          figures.mutations += delta
        } else {
          check(delta === 0, () => `${verdict.kind} from ${c.tool} changed the rev by ${delta}: ${what()}`)
          check(store.getState() === stateBefore, () => `${verdict.kind} from ${c.tool} changed the state: ${what()}`)
        }
        check(!polluted(), () => `prototype polluted after ${what()}`)
        if (figures.cases % 1_000 === 0) {
          await mcp.client.ping()
          expect(prototypeFingerprint()).toBe(fingerprint)
        }
      }),
      { seed: size.seed, numRuns: size.cases },
    )
    // The server is still up and whole.
    await mcp.client.ping()
    const { tools } = await mcp.client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort())
    expect((await mcp.call('list_sessions')).isError).toBeFalsy()
    expect(prototypeFingerprint()).toBe(fingerprint)
    expect(polluted()).toBe(false)
  } finally {
    await mcp.close()
    await store.close()
  }
  return figures
}

const CLI = path.resolve(import.meta.dirname, '../../../../dist/marginalia.mjs')

/**
 * Over stdio against the built CLI: real JSON on a real pipe (NaN and Infinity become null,
 * `undefined` disappears). A reader store on the same file supplies live ids; at the end the
 * file's rev must equal the start plus the successful mutations.
 */
export async function fuzzStdio(size: FuzzSize): Promise<FuzzFigures> {
  const { dir, file, cleanup } = tempDir('marginalia-fuzz-')
  const setup = await openStore({ file })
  await populate(setup)
  const startRev = setup.rev
  await setup.close()
  const child = spawn(process.execPath, [CLI, 'mcp', '--store', file], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d))
  const client = new Client({ name: 'fuzz', version: '1.0.0' })
  const reader = await openStore({ file, pollIntervalMs: 0, watchFiles: false })
  const src = sourceOf(reader)
  const figures = newFigures()
  let asksMaybe = 0
  try {
    await client.connect(new ChildTransport(child))
    await client.listTools()
    await fc.assert(
      fc.asyncProperty(fuzzCase, async (c) => {
        const args = JSON.parse(JSON.stringify(resolveLive(c.args, src, {}) ?? null)) as unknown
        const verdict = await send(client, c.tool, args, WAITING.has(c.tool))
        checkVerdict(verdict, c, args, figures)
        if (verdict.kind === 'result' && MUTATING.has(c.tool)) {
          figures.mutations++
          if (c.tool === 'annotate') asksMaybe++ // it may have started the page's session too
          await reader.sync()
        }
        if ((verdict.kind === 'aborted' && c.tool === 'ask') || askedForPicture(c.tool, verdict)) asksMaybe++
        check(child.exitCode === null, () => `the server exited: ${stderr}`)
      }),
      { seed: size.seed, numRuns: size.cases },
    )
    await client.ping()
    expect((await client.listTools()).tools).toHaveLength(TOOLS.length)
  } finally {
    const exited = child.exitCode !== null ? Promise.resolve() : new Promise<void>((r) => child.once('exit', () => r()))
    await client.close().catch(() => {})
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000).unref())])
    if (child.exitCode === null) child.kill('SIGKILL')
    await reader.close()
  }
  const after = await openStore({ file })
  try {
    expect(after.rev).toBeGreaterThanOrEqual(startRev + figures.mutations)
    expect(after.rev).toBeLessThanOrEqual(startRev + figures.mutations + asksMaybe)
  } finally {
    await after.close()
    cleanup()
  }
  return figures
}
