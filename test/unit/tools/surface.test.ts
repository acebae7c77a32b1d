/**
 * What the model reads: the size of tools/list, strict-mode clients, forgiving inputs,
 * one-line mutation results, truthful errors, and the waits' defaults.
 */
import { describe, expect, it } from 'vitest'
import { toStrictJsonSchema } from 'openai/lib/transform'
import { validateInputTools } from 'openai/lib/parser'
import { Ajv } from 'ajv'
import { createToolRegistry, type CallOutcome } from '../../../src/index.js'
import { DEFAULT_BYTE_BUDGET } from '../../../src/views/page.js'
import { memoryStore } from '../../helpers/store.js'
import { connect, errorOf } from '../../helpers/mcp.js'
import { instructionsFor } from '../../../src/mcp/instructions.js'
import { renderWorkLoop } from '../../../src/mcp/prompts.js'
import { BUILTIN_TOOLS } from '../../../src/index.js'
import { runCleanups, useCleanups, type Cleanups } from '../../helpers/cleanup.js'

const closers = useCleanups()

async function setup() {
  const store = memoryStore()
  const session = await store.createSession({ url: 'http://localhost:5173/checkout' })
  const a1 = await store.addAnnotation({ sessionId: session.id, comment: 'Button is misaligned', url: session.url, element: { selector: 'button.pay' } })
  const registry = createToolRegistry(store, { validateOutput: true })
  return { store, session, a1, registry }
}

const text = (o: CallOutcome) => (o.ok ? o.text : `${o.error.code}: ${o.error.message}`)

describe('tools/list is lean', () => {
  it('stays under its size ceilings: 10 100 bytes with output schemas, 6 KiB of input schemas and descriptions', async () => {
    const { store } = await setup()
    const mcp = await connect(store)
    closers.push(() => mcp.close())
    const listed = await mcp.client.listTools()
    const bytes = Buffer.byteLength(JSON.stringify(listed))
    // 9 989 now (11 808 with titles, the mutations' output schemas, and in the outlines the ids
    // asked with, count, truncated, omittedReplies and `items: { type: "object" }`). The goal is
    // 10 KiB; `marginalia mcp` adds `execution` to the four waits (its tasks): 10 145.
    expect(bytes).toBeLessThanOrEqual(10_100)
    const inputs = listed.tools.reduce((n, t) => n + Buffer.byteLength(JSON.stringify(t.inputSchema)) + Buffer.byteLength(t.description ?? ''), 0)
    expect(inputs).toBeLessThanOrEqual(6 * 1024) // 6 138 now
    const raw = JSON.stringify(listed)
    expect(raw).not.toContain('$schema')
    expect(raw).not.toContain(String(Number.MAX_SAFE_INTEGER))
    expect(raw).not.toContain('"additionalProperties":{}')
  })

  it('every schema node says something (an Inspector --strict style check): a type, enum, const, anyOf or $ref', async () => {
    const { registry } = await setup()
    const empty: string[] = []
    const visit = (node: unknown, path: string) => {
      if (typeof node !== 'object' || node === null) return
      const s = node as Record<string, unknown>
      if (!['type', 'enum', 'const', 'anyOf', 'oneOf', '$ref'].some((k) => k in s)) empty.push(path)
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) visit(v, `${path}.properties.${k}`)
      if (typeof s.items === 'object') visit(s.items, `${path}.items`)
      if (typeof s.additionalProperties === 'object') visit(s.additionalProperties, `${path}.additionalProperties`)
      for (const k of ['anyOf', 'oneOf'] as const) if (Array.isArray(s[k])) (s[k] as unknown[]).forEach((v, i) => visit(v, `${path}.${k}[${i}]`))
    }
    for (const t of registry.list()) {
      visit(t.inputSchema, `${t.name}.inputSchema`)
      expect(t.description.split(/(?<=\.)\s/).length, t.name).toBeLessThanOrEqual(2)
      if (t.outputSchema === undefined) continue // a mutation's answer is its line
      visit(t.outputSchema, `${t.name}.outputSchema`)
      new Ajv({ strict: true, strictRequired: false }).compile(t.outputSchema) // draft-07 Ajv, as SDK clients compile them
    }
    expect(empty).toEqual([])
  })

  it('--lean: createServer({ outputSchemas: false }) lists no output schemas and still answers with structured content', async () => {
    const { store, a1 } = await setup()
    const mcp = await connect(store, { outputSchemas: false })
    closers.push(() => mcp.close())
    const listed = await mcp.client.listTools()
    expect(listed.tools.every((t) => t.outputSchema === undefined)).toBe(true)
    expect(Buffer.byteLength(JSON.stringify(listed))).toBeLessThanOrEqual(10.5 * 1024)
    const r = await mcp.call('get_annotation', { id: a1.id })
    expect(r.structuredContent).toMatchObject({ annotation: { id: a1.id } })
  })
})

describe('strict-mode clients (OpenAI)', () => {
  it("toOpenAITools({ strict: true }) gives schemas openai's toStrictJsonSchema and validateInputTools accept, in both formats", async () => {
    const { registry } = await setup()
    const chat = registry.toOpenAITools({ strict: true })
    expect(() => validateInputTools(chat as never)).not.toThrow()
    for (const t of chat) {
      expect(t.function.strict).toBe(true)
      const params = t.function.parameters
      expect(params.required).toEqual(Object.keys(params.properties as object))
      expect(() => toStrictJsonSchema(params as never), t.function.name).not.toThrow()
    }
    const responses = registry.toOpenAITools({ strict: true, format: 'responses' })
    expect(responses.map((t) => t.name)).toEqual(chat.map((t) => t.function.name))
    for (const t of responses) {
      expect(t).toMatchObject({ type: 'function', strict: true })
      expect(() => toStrictJsonSchema(t.parameters as never)).not.toThrow()
    }
  })

  it('a strict-mode call sends null for every absent parameter and succeeds (registry, MCP, batch, tool-call helper)', async () => {
    const { registry, store, a1 } = await setup()
    const nulls = await registry.call('get_all_pending', { detail: null, limit: null, cursor: null })
    expect(nulls.ok).toBe(true)
    const mcp = await connect(store)
    closers.push(() => mcp.close())
    expect((await mcp.call('watch_annotations', { sessionId: null, timeoutMs: null, detail: null, limit: null })).isError).toBeFalsy()
    const [ack] = await registry.callBatch([{ name: 'acknowledge', arguments: JSON.stringify({ id: a1.id, message: null, expectedRev: null }) }])
    expect(ack!.ok).toBe(true)
    const message = await registry.runOpenAIToolCall({ id: 'call_1', type: 'function', function: { name: 'resolve', arguments: JSON.stringify({ id: a1.id, summary: 'Aligned it', expectedRev: null }) } })
    expect(message).toEqual({ role: 'tool', tool_call_id: 'call_1', content: expect.stringMatching(new RegExp(`^${a1.id} resolved \\(status resolved, rev \\d+\\)`)) })
    const failed = await registry.runOpenAIToolCall({ id: 'call_2', function: { name: 'resolve', arguments: '{not json' } })
    expect(failed.content).toMatch(/^INVALID_PARAMS: .*not valid JSON/)
  })

  it('callBatch takes { name, arguments } (object or JSON string) as well as { name, args }', async () => {
    const { registry, session } = await setup()
    const outcomes = await registry.callBatch([
      { name: 'get_session', arguments: { id: session.id } },
      { name: 'get_session', arguments: JSON.stringify({ id: session.id }) },
      { name: 'get_session', args: { id: session.id } },
    ])
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, true])
  })
})

describe('forgiving inputs', () => {
  it('accepts annotationId, annotation_id and session_id, and a page URL as the session', async () => {
    const { registry, a1, session } = await setup()
    expect((await registry.call('get_annotation', { annotationId: a1.id })).ok).toBe(true)
    expect((await registry.call('get_annotation', { annotation_id: a1.id })).ok).toBe(true)
    expect((await registry.call('get_pending', { session_id: session.id })).ok).toBe(true)
    expect((await registry.call('get_session', { sessionId: session.id })).ok).toBe(true)
    const byUrl = await registry.call('get_pending', { sessionId: 'http://localhost:5173/checkout' })
    expect(byUrl.ok && byUrl.result.sessionId).toBe(session.id)
    const unknownUrl = await registry.call('get_pending', { sessionId: 'http://localhost:5173/nowhere' })
    expect(text(unknownUrl)).toContain('no session for the page http://localhost:5173/nowhere (list_sessions shows')
  })

  it('an unknown parameter gets a "did you mean"', async () => {
    const { registry, a1 } = await setup()
    const r = await registry.call('resolve', { id: a1.id, sumary: 'x' })
    expect(text(r)).toBe('INVALID_PARAMS: resolve: invalid input — sumary: unknown parameter; did you mean "summary"? Parameters: id, summary, expectedRev, after')
    expect(text(await registry.call('get_all_pending', { cursor: 'x', Limit: 5 }))).toContain('did you mean "limit"?')
  })
})

describe('what mutations and lists say', () => {
  it('a mutation answers with one line: what changed, status, rev and the next step; structuredContent keeps the record', async () => {
    const { registry, a1 } = await setup()
    const ack = await registry.call('acknowledge', { id: a1.id })
    expect(ack.ok && ack.text).toMatch(new RegExp(`^${a1.id} acknowledged \\(status acknowledged, rev \\d+\\); the person sees it\\. Next: fix it, then resolve \\(or reply, or dismiss\\)\\.$`))
    expect(ack.ok && ack.result.annotation).toMatchObject({ id: a1.id, comment: 'Button is misaligned' })
    for (const [tool, args, word] of [
      ['reply', { message: 'Looking' }, 'replied'],
      ['dismiss', { reason: 'Intended' }, 'dismissed'],
      ['resolve', { summary: 'Done' }, 'resolved'],
    ] as const) {
      const r = await registry.call(tool, { id: a1.id, ...args })
      expect(r.ok && r.text.split('\n')).toHaveLength(1)
      expect(r.ok && r.text).toContain(`${a1.id} ${word} (status`)
      expect(r.ok && Buffer.byteLength(r.text)).toBeLessThan(160)
    }
  })

  it('lists, watches and gets carry the store rev, structured and in the header line', async () => {
    const { registry, store, session, a1 } = await setup()
    for (const [tool, args] of [
      ['get_all_pending', {}],
      ['get_pending', { sessionId: session.id }],
      ['get_session', { id: session.id }],
      ['watch_annotations', { timeoutMs: 1 }],
    ] as const) {
      const r = await registry.call(tool, args)
      expect(r.ok && r.result.rev, tool).toBe(store.rev)
      expect(r.ok && r.text.split('\n')[0], tool).toContain(`rev ${store.rev}`)
    }
    const got = await registry.call('get_annotation', { id: a1.id })
    expect(got.ok && got.result.rev).toBe(store.rev)
  })

  it('watch_annotations points at get_all_pending with the cursor, never at a parameter it lacks', async () => {
    const { registry, store, session } = await setup()
    for (let i = 0; i < 3; i++) await store.addAnnotation({ sessionId: session.id, comment: `more ${i}`, url: session.url, element: { selector: 'p' } })
    const r = await registry.call('watch_annotations', { limit: 2 })
    expect(r.ok && r.text).toMatch(/More: get_all_pending with cursor "[^"]+"\.$/)
    const input = registry.list().find((t) => t.name === 'watch_annotations')!.inputSchema
    expect(Object.keys(input.properties as object)).not.toContain('cursor')
  })

  it('INVALID_TRANSITION says what is true: taken (maybe by you) or finished', async () => {
    const { registry, a1, store, session } = await setup()
    await registry.call('acknowledge', { id: a1.id })
    expect(text(await registry.call('acknowledge', { id: a1.id }))).toBe(
      `INVALID_TRANSITION: Cannot acknowledge ${a1.id}: it is already acknowledged, by you or another agent. If it is yours, go on with resolve, reply or dismiss; otherwise pick another pending annotation.`,
    )
    await registry.call('resolve', { id: a1.id })
    expect(text(await registry.call('acknowledge', { id: a1.id }))).toBe(`INVALID_TRANSITION: Cannot acknowledge ${a1.id}: it is resolved, so it is finished; nothing to do — the person can reopen it.`)
    const a2 = await store.addAnnotation({ sessionId: session.id, comment: 'x', url: session.url, element: { selector: 'p' } })
    await registry.call('dismiss', { id: a2.id, reason: 'no' })
    expect(text(await registry.call('acknowledge', { id: a2.id }))).toBe(`INVALID_TRANSITION: Cannot acknowledge ${a2.id}: it is dismissed, so it is finished; nothing to do — the person can reopen it.`)
  })

  it('a failed MCP call has no structured content (the output schema is the success shape) and its error in _meta', async () => {
    const { store } = await setup()
    const mcp = await connect(store)
    closers.push(() => mcp.close())
    const r = await mcp.call('get_annotation', { id: 'ann_missing' })
    expect(r.structuredContent).toBeUndefined()
    expect(errorOf(r).code).toBe('NOT_FOUND')
  })

  it('the default byte budget keeps a result under ~80 KB (20 000 tokens)', () => {
    expect(DEFAULT_BYTE_BUDGET).toBeLessThanOrEqual(80 * 1024)
  })
})

describe('instructions and the work_loop prompt', () => {
  const all = BUILTIN_TOOLS.map((t) => t.name)

  it('the instructions stay within 1 200 characters and do not repeat the tool list', () => {
    const text = instructionsFor(all)
    expect(text.length).toBeLessThanOrEqual(1_200)
    expect(text).not.toMatch(/Tools:/)
    expect(text).not.toContain('list_sessions')
  })

  it('both say one way to ask, act by intent, blocking first, reopened, source location and screenshot, and the 55 s wait', async () => {
    const { store } = await setup()
    const prompt = (renderWorkLoop(store, all).messages[0]!.content as { text: string }).text
    for (const text of [instructionsFor(all), prompt]) {
      expect(text).toContain('ask once (it waits for the answer); after its timeout call await_reply — never ask twice.')
      expect(text).not.toMatch(/reply to ask/)
      expect(text).toContain('fix/change → edit the code; question → answer with reply, then resolve; approve → resolve')
      expect(text).toContain('Take blocking ones first')
      expect(text).toContain('A reopened annotation comes back as pending')
      expect(text).toContain('Open the source location first when the annotation has one, and look at the screenshot when there is one')
      expect(text).toContain('A wait ends before clients time out (55 s by default); an empty answer says how to continue, missing nothing.')
    }
  })
})

describe('waits that fit the clients', () => {
  it('every waiting tool says its default and that the server caps it (test/e2e/tools/max-wait.test.ts: the cap itself)', async () => {
    const { registry } = await setup()
    for (const name of ['watch_annotations', 'watch_changes', 'ask', 'await_reply']) {
      const t = registry.list().find((x) => x.name === name)!
      const timeout = (t.inputSchema.properties as Record<string, { description: string }>).timeoutMs!
      expect(timeout.description).toBe('Max ms to wait (default 25000; server-capped)')
    }
  })
})

describe('plugins in the common shape', () => {
  it('takes { name, description, inputSchema, handler } with a zod object, a zod raw shape or a JSON Schema; title from the name', async () => {
    const { z } = await import('zod')
    const store = memoryStore()
    const handler = (args: Record<string, unknown>) => ({ echoed: args.city })
    const registry = createToolRegistry(store, {
      plugins: [
        { name: 'get_weather', description: 'Weather for a city.', inputSchema: z.object({ city: z.string() }), handler },
        { name: 'get_weather_raw', description: 'Weather for a city.', inputSchema: { city: z.string() }, handler },
        { name: 'get_weather_json', description: 'Weather for a city.', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, handler, title: 'Weather' },
      ],
      validateOutput: true,
    })
    const listed = Object.fromEntries(registry.list().map((t) => [t.name, t]))
    expect(listed.get_weather!.title).toBe('Get weather')
    expect(listed.get_weather_json!.title).toBe('Weather')
    expect(listed.get_weather!.outputSchema).toBeUndefined() // "any object" says nothing: none is listed
    for (const name of ['get_weather', 'get_weather_raw', 'get_weather_json']) {
      const ok = await registry.call(name, { city: 'Oslo' })
      expect(ok.ok && ok.result, name).toEqual({ echoed: 'Oslo' })
      expect((await registry.call(name, {})).ok, name).toBe(false)
      expect(listed[name]!.inputSchema, name).toMatchObject({ properties: { city: { type: 'string' } }, required: ['city'] })
    }
  })
})

describe('a declared JSON Schema dialect', () => {
  it('is published as its author wrote it ($schema, $defs, additionalProperties kept), while undeclared schemas stay lean', async () => {
    const { z } = await import('zod')
    const DIALECT = 'https://json-schema.org/draft/2020-12/schema'
    const handler = () => ({ ok: true })
    const registry = createToolRegistry(memoryStore(), {
      plugins: [
        { name: 'declared_zod', description: 'x', inputSchema: z.strictObject({ a: z.string() }).meta({ $schema: DIALECT }), handler },
        { name: 'declared_json', description: 'x', inputSchema: { $schema: DIALECT, type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }, handler },
        { name: 'undeclared', description: 'x', inputSchema: z.strictObject({ a: z.string() }), handler },
      ],
    })
    const listed = Object.fromEntries(registry.list().map((t) => [t.name, t.inputSchema as Record<string, unknown>]))
    for (const name of ['declared_zod', 'declared_json']) expect(listed[name], name).toMatchObject({ $schema: DIALECT, additionalProperties: false })
    expect(listed.undeclared).not.toHaveProperty('$schema')
    expect(listed.undeclared).not.toHaveProperty('additionalProperties')
    for (const t of registry.list().filter((t) => t.name.startsWith('get_') || BUILTIN_TOOLS.some((b) => b.name === t.name))) expect(t.inputSchema, t.name).not.toHaveProperty('$schema')
  })
})

describe('null = absent over REST too', () => {
  it('a body with null optional fields is accepted as if they were left out', async () => {
    const { request, serve } = await import('../../helpers/http.js')
    const store = memoryStore()
    const cleanups: Cleanups = []
    closers.push(async () => {
      await runCleanups(cleanups)
      await store.close()
    })
    const server = await serve(store, cleanups)
    const created = await request(`${server.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/', name: null } })
    expect(created.status).toBe(201)
    const session = created.json as { id: string; name?: string }
    expect(session.name).toBeUndefined()
    const ann = await request(`${server.url}/api/sessions/${session.id}/annotations`, { method: 'POST', body: { comment: 'x', element: { selector: 'p' }, intent: null, severity: null } })
    expect(ann.status).toBe(201)
  })
})
