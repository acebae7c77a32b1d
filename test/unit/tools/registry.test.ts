import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { Ajv } from 'ajv'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { LATEST_PROTOCOL_VERSION as SERVER_SDK_LATEST } from '@modelcontextprotocol/server'
import { LATEST_PROTOCOL_VERSION as OURS } from '../../../src/tools/registry.js'
import { AcknowledgeInput, BUILTIN_TOOLS, createToolRegistry, defineTool, DismissInput, ResolveInput, ToolRegistry, type CallOutcome } from '../../../src/index.js'
import { VERSION } from '../../../src/version.js'
import { instructionsFor } from '../../../src/mcp/instructions.js'
import { memoryStore } from '../../helpers/store.js'
import { connect } from '../../helpers/mcp.js'
import { acknowledgeAt, countPending, deleteAnnotation, explode, liar, nullish } from '../../helpers/plugins.js'
import { z } from 'zod'
import { useCleanups } from '../../helpers/cleanup.js'
import { BUILTIN_NAMES, READ_ONLY_NAMES } from '../../helpers/tools.js'

const closers = useCleanups()

async function setup(options: Parameters<typeof createToolRegistry>[1] = {}) {
  const store = memoryStore()
  const session = await store.createSession({ url: 'http://localhost:5173/' })
  const a1 = await store.addAnnotation({ sessionId: session.id, comment: 'Button overlaps the footer' })
  const a2 = await store.addAnnotation({ sessionId: session.id, comment: 'Logo is blurry' })
  const registry = createToolRegistry(store, options)
  return { store, session, a1, a2, registry }
}

function failure(outcome: CallOutcome) {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.result)}`)
  return outcome.error
}

describe('registry.list()', () => {
  it('lists the built-in tools in order with title, description and JSON Schemas derived from zod', async () => {
    const { registry } = await setup()
    const list = registry.list()
    expect(list.map((t) => t.name)).toEqual(BUILTIN_NAMES)
    expect(registry.names()).toEqual(BUILTIN_NAMES)
    expect(list.filter((t) => t.outputSchema === undefined).map((t) => t.name)).toEqual(['acknowledge', 'resolve', 'dismiss', 'reply'])
    for (const t of list) {
      expect(t.title).toMatch(/^[A-Z][a-z ]+$/) // from the name: get_all_pending → Get all pending
      expect(t.description.length).toBeGreaterThan(40)
      expect(t.inputSchema).toMatchObject({ type: 'object' })
      // No dialect URI (2020-12 is MCP's default) and no additionalProperties: false (aliases are accepted; other keys get a "did you mean").
      expect(t.inputSchema).not.toHaveProperty('$schema')
      expect(t.inputSchema).not.toHaveProperty('additionalProperties')
      if (t.outputSchema === undefined) continue
      expect(t.outputSchema).not.toHaveProperty('$schema')
      expect(t.outputSchema.type).toBe('object')
      // The output schema is the success shape only: failures are isError results without structured content.
      expect(t.outputSchema).not.toHaveProperty('anyOf')
      expect(t.outputSchema.properties).not.toHaveProperty('error')
    }
    const byName = Object.fromEntries(list.map((t) => [t.name, t]))
    expect(byName.get_session!.inputSchema).toMatchObject({ properties: { id: { type: 'string' } }, required: ['id'] })
    expect(byName.get_session!.inputSchema.properties).not.toHaveProperty('id.minLength') // not published: an empty id is refused by name (below)
    expect(byName.watch_annotations!.inputSchema.properties).toMatchObject({ timeoutMs: { type: 'integer', minimum: 1, maximum: 300_000 } })
  })

  it('command tools take the store command inputs: the same fields and rules, and an id', async () => {
    const { registry, a1 } = await setup()
    const byName = Object.fromEntries(registry.list().map((t) => [t.name, t]))
    const fields = (name: string) => Object.keys(byName[name]!.inputSchema.properties as object)
    expect(fields('acknowledge')).toEqual(['id', ...Object.keys(AcknowledgeInput.shape)])
    expect(fields('resolve')).toEqual(['id', ...Object.keys(ResolveInput.shape), 'after'])
    expect(fields('dismiss')).toEqual(['id', ...Object.keys(DismissInput.shape)])
    expect(fields('reply')).toEqual(['id', 'message', 'expectedRev']) // author and kind are the tool's to set
    for (const [name, field] of [['acknowledge', 'message'], ['resolve', 'summary'], ['dismiss', 'reason'], ['reply', 'message'], ['ask', 'question']] as const) {
      expect((byName[name]!.inputSchema.properties as Record<string, object>)[field]).toEqual(expect.objectContaining({ type: 'string' }))
      expect((byName[name]!.inputSchema.properties as Record<string, object>)[field]).not.toHaveProperty('minLength') // left out of tools/list: enforced below
    }
    // The store's rule, which tools/list does not state: not empty, not only whitespace; the error names the field.
    const blank = failure(await registry.call('dismiss', { id: a1.id, reason: '   ' }))
    expect(blank).toMatchObject({ code: 'INVALID_PARAMS', details: { issues: [{ path: 'reason', message: 'must not be empty or only whitespace' }] } })
    const empty = failure(await registry.call('reply', { id: a1.id, message: '' }))
    expect(empty.code).toBe('INVALID_PARAMS')
    expect((empty.details as { issues: { path: string }[] }).issues.map((i) => i.path)).toContain('message')
    const noId = failure(await registry.call('get_session', { id: '' }))
    expect([noId.code, ...(noId.details as { issues: { path: string }[] }).issues.map((i) => i.path)]).toEqual(['INVALID_PARAMS', 'id'])
  })

  it('the package root exports the registry API', async () => {
    const { store } = await setup()
    expect(createToolRegistry(store)).toBeInstanceOf(ToolRegistry)
    expect(createToolRegistry(store).names()).toEqual(BUILTIN_TOOLS.map((t) => t.name)) // the exported list is the one a registry serves
    expect(typeof defineTool).toBe('function')
  })
})

describe('registry.call()', () => {
  it('returns { ok: true, result } with the tool output', async () => {
    const { registry, a1, a2 } = await setup()
    const outcome = await registry.call('get_all_pending', {})
    expect(outcome).toEqual({ ok: true, result: { annotations: [expect.objectContaining({ id: a1.id }), expect.objectContaining({ id: a2.id })], count: 2, total: 2, rev: registry.store.rev }, text: expect.stringContaining(a1.id) })
    const ack = await registry.call('acknowledge', { id: a1.id, message: 'On it' })
    expect(ack.ok && (ack.result.annotation as { status: string }).status).toBe('acknowledged')
  })

  it('UNKNOWN_TOOL lists the available tools', async () => {
    const { registry } = await setup()
    const error = failure(await registry.call('delete_everything', {}))
    expect(error.code).toBe('UNKNOWN_TOOL')
    expect(error.message).toContain('"delete_everything"')
    for (const name of BUILTIN_NAMES) expect(error.message).toContain(name)
    expect(error.details).toEqual({ tool: 'delete_everything', available: BUILTIN_NAMES })
  })

  it('INVALID_PARAMS names the field (wrong type, missing, extra, not an object)', async () => {
    const { registry, a1 } = await setup()
    const wrongType = failure(await registry.call('get_session', { id: 42 }))
    expect(wrongType.code).toBe('INVALID_PARAMS')
    expect(wrongType.message).toMatch(/^get_session: invalid input — id: /)
    const missing = failure(await registry.call('dismiss', { id: a1.id }))
    expect(missing).toMatchObject({ code: 'INVALID_PARAMS', details: { issues: [{ path: 'reason' }] } })
    const extra = failure(await registry.call('list_sessions', { bogus: 1 }))
    expect(extra.code).toBe('INVALID_PARAMS')
    expect(extra.message).toContain('bogus')
    expect(failure(await registry.call('list_sessions', 'nope')).code).toBe('INVALID_PARAMS')
    const tooLong = failure(await registry.call('watch_annotations', { timeoutMs: 10_000_000 }))
    expect(tooLong.message).toContain('timeoutMs')
  })

  it('passes the domain codes through: NOT_FOUND, INVALID_TRANSITION, CONFLICT', async () => {
    const { registry, a1 } = await setup({ plugins: [acknowledgeAt] })
    const notFound = failure(await registry.call('get_session', { id: 'ses_missing' }))
    expect(notFound).toMatchObject({ code: 'NOT_FOUND', details: { kind: 'session', id: 'ses_missing' } })
    expect(notFound.message).toContain('ses_missing')

    const conflict = failure(await registry.call('acknowledge_at', { id: a1.id, expectedRev: 0 }))
    expect(conflict).toMatchObject({ code: 'CONFLICT', details: { annotationId: a1.id, expectedRev: 0 } })

    expect((await registry.call('acknowledge_at', { id: a1.id, expectedRev: a1.rev })).ok).toBe(true)
    const twice = failure(await registry.call('acknowledge', { id: a1.id }))
    expect(twice).toMatchObject({ code: 'INVALID_TRANSITION', details: { currentStatus: 'acknowledged' } })
  })

  it('INTERNAL_ERROR for a handler that throws a plain Error, and for output that breaks its schema', async () => {
    const { registry } = await setup({ plugins: [explode, liar], validateOutput: true })
    expect(failure(await registry.call('explode', {}))).toEqual({ code: 'INTERNAL_ERROR', message: 'Internal error: kaboom' })
    const lie = failure(await registry.call('liar', {}))
    expect(lie.code).toBe('INTERNAL_ERROR')
    expect(lie.message).toContain('liar produced output that does not match its schema')
  })

  it('CANCELLED when the signal is aborted, STORE_CLOSED after the store closed', async () => {
    const { registry, store, a1 } = await setup()
    const controller = new AbortController()
    controller.abort()
    expect(failure(await registry.call('watch_annotations', { timeoutMs: 5_000 }, { signal: controller.signal })).code).toBe('CANCELLED')
    await store.close()
    expect(failure(await registry.call('acknowledge', { id: a1.id })).code).toBe('STORE_CLOSED')
  })

  it('never throws, whatever it is given', async () => {
    const { registry } = await setup()
    const bad: unknown[] = [undefined, null, 42, {}, '']
    for (const name of bad) {
      const outcome = await registry.call(name as string, undefined)
      expect(failure(outcome).code).toBe('UNKNOWN_TOOL')
    }
    expect(failure(await registry.call('get_session', null)).code).toBe('INVALID_PARAMS') // null → {} → id missing
  })
})

describe('registry.callBatch()', () => {
  it('runs calls in order, one outcome per call; a failure keeps its slot and the rest still run', async () => {
    const { registry, store, a1, a2 } = await setup()
    const outcomes = await registry.callBatch([
      { name: 'acknowledge', args: { id: a1.id } },
      { name: 'acknowledge', args: { id: a1.id } }, // already taken: fails, in place
      { name: 'nope' },
      { name: 'resolve', args: { id: a2.id, summary: 'Sharper logo' } },
      { name: 'get_all_pending' },
    ])
    expect(outcomes.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual(['ok', 'INVALID_TRANSITION', 'UNKNOWN_TOOL', 'ok', 'ok'])
    expect(outcomes[4]).toMatchObject({ ok: true, result: { annotations: [], count: 0, total: 0 } }) // saw the earlier calls' effects
    expect(store.getAnnotation(a2.id).status).toBe('resolved')
    expect(await registry.callBatch([])).toEqual([])
  })

  it('a malformed entry fails in its own slot', async () => {
    const { registry } = await setup()
    const outcomes = await registry.callBatch([null, { name: 'list_sessions' }] as unknown as { name: string }[])
    expect(outcomes.map((o) => o.ok)).toEqual([false, true])
  })
})

describe('registry.toOpenAITools()', () => {
  /** Every value in a JSON document, depth first. */
  function* values(node: unknown): Generator<unknown> {
    yield node
    if (typeof node === 'object' && node !== null) for (const v of Object.values(node)) yield* values(v)
  }

  it('gives OpenAI-style function definitions that compile as JSON Schema and contain no null', async () => {
    const { registry } = await setup({ plugins: [nullish, countPending] })
    const tools = registry.toOpenAITools()
    expect(tools.map((t) => t.function.name)).toEqual([...BUILTIN_NAMES, 'nullish', 'count_pending'])
    const ajv = new Ajv2020({ strict: true, allErrors: true })
    for (const tool of tools) {
      expect(Object.keys(tool)).toEqual(['type', 'function'])
      expect(tool.type).toBe('function')
      expect(tool.function.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
      expect(tool.function.description.length).toBeGreaterThan(20)
      expect(tool.function.parameters.type).toBe('object')
      expect(tool.function.parameters).toHaveProperty('properties')
      expect(tool.function.parameters).not.toHaveProperty('$schema')
      expect([...values(tool)].filter((v) => v === null)).toEqual([])
      expect(ajv.validateSchema(tool.function.parameters), JSON.stringify(ajv.errors)).toBe(true)
      expect(() => ajv.compile(tool.function.parameters)).not.toThrow()
    }
    // Also valid for draft-07 validators, which many function-calling stacks use.
    const draft7 = new Ajv({ strict: false })
    for (const tool of tools) expect(draft7.validateSchema(tool.function.parameters)).toBe(true)
    // The zod schema itself did carry nulls: the export removed them.
    const raw = registry.list().find((t) => t.name === 'nullish')!.inputSchema
    expect([...values(raw)].filter((v) => v === null).length).toBeGreaterThan(0)
  })

  it('the exported parameters accept what the tool accepts and reject what it rejects', async () => {
    const { registry } = await setup()
    const ajv = new Ajv2020({ strict: false })
    const params = Object.fromEntries(registry.toOpenAITools().map((t) => [t.function.name, ajv.compile(t.function.parameters)]))
    expect(params.dismiss!({ id: 'ann_1', reason: 'Intended' })).toBe(true)
    expect(params.dismiss!({ id: 'ann_1' })).toBe(false)
    expect(params.watch_annotations!({ timeoutMs: 0 })).toBe(false)
    expect(params.get_all_pending!({ extra: 1 })).toBe(false)
  })

  it('exports only the exposed tools', async () => {
    const { registry } = await setup({ profile: 'read-only' })
    expect(registry.toOpenAITools().map((t) => t.function.name)).toEqual(READ_ONLY_NAMES)
  })
})

describe('registry.serverInfo()', () => {
  it('names the protocol version the MCP server package names as its latest (the registry carries its own copy so it loads without the SDK)', () => {
    expect(OURS).toBe(SERVER_SDK_LATEST)
  })

  it('reports name, version, protocol version, capabilities and tool names — as a client sees them', async () => {
    const { registry, store } = await setup({ profile: 'read-only' })
    const info = registry.serverInfo()
    expect(info).toEqual({
      name: 'marginalia',
      title: 'Marginalia',
      version: VERSION,
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: { logging: {}, tools: { listChanged: false }, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, completions: {} },
      profile: 'read-only',
      tools: READ_ONLY_NAMES,
      appTools: [], // a read-only server's inbox app lists and filters, it does not write
    })
    const mcp = await connect(store, { registry })
    closers.push(() => mcp.close())
    expect(mcp.client.getServerCapabilities()).toEqual(info.capabilities)
    expect(mcp.client.getServerVersion()).toMatchObject({ name: info.name, version: info.version })
    expect((await mcp.client.listTools()).tools.map((t) => t.name)).toEqual(info.tools)
    expect(mcp.client.getInstructions()).toBe(instructionsFor(info.tools)) // the instructions follow the exposed tools (read-only: no acknowledge)
    expect(mcp.client.getInstructions()).not.toContain('acknowledge')
  })
})

describe('tool definitions', () => {
  const tool = (overrides: Record<string, unknown>) =>
    defineTool({
      name: 'ok_tool',
      title: 'OK',
      description: 'A tool.',
      input: z.strictObject({}),
      output: z.object({}),
      annotations: {},
      handler: () => ({}),
      ...overrides,
    })

  it('refuse duplicate names (a plugin cannot shadow a built-in), bad names and missing descriptions', async () => {
    const store = memoryStore()
    expect(() => createToolRegistry(store, { plugins: [tool({ name: 'acknowledge' })] })).toThrow(/Duplicate tool name: acknowledge/)
    expect(() => createToolRegistry(store, { plugins: [countPending, countPending] })).toThrow(/Duplicate tool name: count_pending/)
    expect(() => createToolRegistry(store, { plugins: [tool({ name: 'has space' })] })).toThrow(/Tool name "has space" is invalid/)
    expect(() => createToolRegistry(store, { plugins: [tool({ name: 'x'.repeat(65) })] })).toThrow(/is invalid/)
    expect(() => createToolRegistry(store, { plugins: [tool({ description: '  ' })] })).toThrow(/Tool "ok_tool" needs a non-empty description/)
    expect(() => createToolRegistry(store, { plugins: [tool({ title: ' ' })] })).toThrow(/title, when given, must be non-empty/)
    expect(createToolRegistry(store, { plugins: [tool({ title: undefined })] }).list().find((t) => t.name === 'ok_tool')!.title).toBe('Ok tool') // from the name
    expect(() => createToolRegistry(store, { plugins: [tool({ input: z.string() })] })).toThrow(/input must be a zod object schema/)
    expect(createToolRegistry(store, { plugins: [tool({}), deleteAnnotation] }).names()).toContain('ok_tool')
  })

  it('`tools` replaces the built-in catalogue', async () => {
    const store = memoryStore()
    expect(createToolRegistry(store, { tools: [countPending] }).names()).toEqual(['count_pending'])
  })
})

describe("the embedding guide's example", () => {
  it('does what docs/guide/embedding.md says', async () => {
    const guide = readFileSync(path.resolve(import.meta.dirname, '../../../docs/guide/embedding.md'), 'utf8')
    expect(guide, 'the guide shows this very call').toContain("createToolRegistry(store, { profile: 'default', plugins: [countPending], deny: ['dismiss'] })")
    const store = memoryStore()
    const registry = createToolRegistry(store, { profile: 'default', plugins: [countPending], deny: ['dismiss'] })
    expect(registry.names()).toEqual([...BUILTIN_NAMES.filter((n) => n !== 'dismiss'), 'count_pending'])
    expect(await registry.call('count_pending', {})).toEqual({ ok: true, result: { count: 0 }, text: '{"count":0}' })
    expect(await registry.call('acknowledge', { id: 'x' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
    const batch = await registry.callBatch([{ name: 'get_all_pending' }, { name: 'resolve', args: { id: 'x', summary: 'Done' } }])
    expect(batch.map((o) => o.ok)).toEqual([true, false])
    expect(registry.serverInfo()).toMatchObject({ name: 'marginalia', profile: 'default', tools: registry.names() })
    expect(registry.toOpenAITools()).toHaveLength(BUILTIN_NAMES.length)
  })
})
