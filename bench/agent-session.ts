/**
 * The scripted agent session: what a model reads while it works through a person's
 * annotations, over stdio with the official SDK client. A person posts 3 annotations in a burst
 * (150 ms apart), one of them a question; the agent watches, acknowledges, asks and gets an
 * answer, resolves all three; the person reopens one; the agent watches, takes it again and
 * resolves it. Counted: tool calls, and bytes of text the model reads (every text content block
 * of every result, plus the tools/list it was given). Every call runs with the SDK client's default
 * request timeout (60 s, the v2 client's too), and with `longWait` the session ends on a watch
 * that asks for 2 minutes: the server's max wait must answer it before the client gives up.
 *
 * `tsx bench/agent-session.ts [path/to/marginalia.mjs]` prints the figures as JSON for any build
 * (the "before" figures of scenario 7 in docs/benchmarks.md came from an earlier build this way).
 */
import { DEFAULT_REQUEST_TIMEOUT_MSEC as V2_CLIENT_TIMEOUT_MS } from '@modelcontextprotocol/client'
import { DEFAULT_REQUEST_TIMEOUT_MSEC as V1_CLIENT_TIMEOUT_MS } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { openStore } from '../src/index.js'
import { CLI, seedStore, sleep, spawnMcp, tempDir } from './lib.js'

export interface SessionFigures {
  toolCalls: number
  /** Bytes of text content in the tool results. */
  resultTextBytes: number
  /** Bytes of the tools/list result (the tools array as JSON). */
  toolsListBytes: number
  /** resultTextBytes + toolsListBytes. */
  totalBytes: number
  /** watch_annotations calls it took to see the whole burst. */
  watchesForBurst: number
  /** The longest call, spawn of the request to its answer, in ms. */
  longestCallMs: number
  /** The default request timeout of the official SDK clients (v1 and v2: the smaller). */
  clientTimeoutMs: number
}

const textOf = (r: CallToolResult) => (r.content ?? []).reduce((n, c) => n + (c.type === 'text' ? Buffer.byteLength(c.text) : 0), 0)

export async function agentSession(cli: string = CLI, options: { longWait?: boolean } = {}): Promise<SessionFigures> {
  const dir = tempDir()
  const { file, sessionId } = await seedStore(dir, 0)
  const server = await spawnMcp(dir, [], cli)
  const person = await openStore({ file, pollIntervalMs: 0 })
  let toolCalls = 0
  let resultTextBytes = 0
  let longestCallMs = 0
  const call = async (name: string, args: Record<string, unknown>) => {
    toolCalls++
    const t0 = performance.now()
    // The client's defaults: a call that outlasts its request timeout fails here (-32001).
    const result = (await server.client.callTool({ name, arguments: args })) as CallToolResult
    longestCallMs = Math.max(longestCallMs, performance.now() - t0)
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`)
    resultTextBytes += textOf(result)
    return result.structuredContent as Record<string, unknown>
  }
  try {
    const { tools } = await server.client.listTools()
    const toolsListBytes = Buffer.byteLength(JSON.stringify({ tools }))
    const url = 'http://localhost:5173/checkout'
    const burst = [
      { comment: 'The total is misaligned with the line items', intent: 'fix', severity: 'important' },
      { comment: 'Should the coupon field be above or below the total?', intent: 'question', severity: 'suggestion' },
      { comment: 'Submit button overlaps the footer on narrow screens', intent: 'fix', severity: 'blocking' },
    ] as const
    // The person: a burst of three, 150 ms apart, shortly after the agent starts watching.
    const posting = (async () => {
      await sleep(100)
      for (const [i, b] of burst.entries()) {
        if (i > 0) await sleep(150)
        await person.addAnnotation({ sessionId, url, element: { selector: `main > section:nth-child(${i + 1}) > button`, text: 'Submit order', tag: 'button' }, ...b })
      }
    })()
    const seen = new Map<string, { id: string; intent?: string }>()
    let watchesForBurst = 0
    while (seen.size < burst.length) {
      watchesForBurst++
      const r = await call('watch_annotations', { timeoutMs: 10_000 })
      // Take what came back before watching again (a watch answers at once while anything is pending).
      for (const a of (r.annotations ?? []) as { id: string; intent?: string }[]) {
        if (seen.has(a.id)) continue
        seen.set(a.id, a)
        await call('acknowledge', { id: a.id })
      }
    }
    await posting
    // The question: ask, and the person answers.
    const question = [...seen.values()].find((a) => a.intent === 'question')!
    const answering = (async () => {
      for (let i = 0; i < 200; i++) {
        await sleep(25)
        await person.sync()
        const asked = person.getAnnotation(question.id).replies.find((r) => r.kind === 'question')
        if (asked) {
          await person.reply(question.id, { author: 'human', message: 'Below the total, please.' })
          return
        }
      }
    })()
    await call('ask', { id: question.id, question: 'Above or below the total?', timeoutMs: 10_000 })
    await answering
    for (const a of seen.values()) await call('resolve', { id: a.id, summary: a.intent === 'question' ? 'Moved the coupon field below the total.' : 'Fixed the layout.' })
    // The person reopens one; the agent takes it again.
    const reopened = [...seen.values()][0]!
    await person.sync()
    await person.reopen(reopened.id, { message: 'Still off by a pixel on mobile.' })
    await call('watch_annotations', { timeoutMs: 10_000 })
    await call('acknowledge', { id: reopened.id })
    const last = await call('resolve', { id: reopened.id, summary: 'Fixed the rounding on mobile.' })
    if (options.longWait) {
      // Nothing more happens: a 2-minute watch must come back empty within the client's default
      // timeout. Timed like every call, not counted with the session's calls and bytes.
      const t0 = performance.now()
      const r = (await server.client.callTool({ name: 'watch_changes', arguments: { sinceRev: last.rev, timeoutMs: 120_000 } })) as CallToolResult
      longestCallMs = Math.max(longestCallMs, performance.now() - t0)
      if ((r.structuredContent as { status?: string } | undefined)?.status !== 'timeout') throw new Error(`the long watch answered ${JSON.stringify(r.structuredContent)}, not a timeout`)
    }
    const clientTimeoutMs = Math.min(V1_CLIENT_TIMEOUT_MS, V2_CLIENT_TIMEOUT_MS)
    return { toolCalls, resultTextBytes, toolsListBytes, totalBytes: resultTextBytes + toolsListBytes, watchesForBurst, longestCallMs, clientTimeoutMs }
  } finally {
    await person.close()
    await server.close()
  }
}

if (process.argv[1]?.endsWith('agent-session.ts')) {
  agentSession(process.argv[2]).then(
    (f) => process.stdout.write(JSON.stringify(f, null, 2) + '\n'),
    (e: unknown) => {
      process.stderr.write(`agent session failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
      process.exitCode = 1
    },
  )
}
