/**
 * The scripted agent session of issue 17: what a model reads while it works through a person's
 * annotations, over stdio with the official SDK client. A person posts 3 annotations in a burst
 * (150 ms apart), one of them a question; the agent watches, acknowledges, asks and gets an
 * answer, resolves all three; the person reopens one; the agent watches, takes it again and
 * resolves it. Counted: tool calls, and bytes of text the model reads (every text content block
 * of every result, plus the tools/list it was given).
 *
 * `tsx bench/agent-session.ts [path/to/marginalia.mjs]` prints the figures as JSON for any build
 * (the "before" figures of scenario 7 in docs/benchmarks.md came from an earlier build this way).
 */
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
}

const textOf = (r: CallToolResult) => (r.content ?? []).reduce((n, c) => n + (c.type === 'text' ? Buffer.byteLength(c.text) : 0), 0)

export async function agentSession(cli: string = CLI): Promise<SessionFigures> {
  const dir = tempDir()
  const { file, sessionId } = await seedStore(dir, 0)
  const server = await spawnMcp(dir, [], cli)
  const person = await openStore({ file, pollIntervalMs: 0 })
  let toolCalls = 0
  let resultTextBytes = 0
  const call = async (name: string, args: Record<string, unknown>) => {
    toolCalls++
    const { result } = await server.call(name, args)
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
    await call('resolve', { id: reopened.id, summary: 'Fixed the rounding on mobile.' })
    return { toolCalls, resultTextBytes, toolsListBytes, totalBytes: resultTextBytes + toolsListBytes, watchesForBurst }
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
