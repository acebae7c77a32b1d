import { describe, expect, it } from 'vitest'
import {
  BUILTIN_TOOLS,
  createServer,
  createToolRegistry,
  TOOL_PROFILES,
  ToolPolicyError,
  type ToolPolicy,
  type ToolProfile,
} from '../../../src/index.js'
import { resolveToolPolicy } from '../../../src/tools/policy.js'
import { parseToolPolicyFlags } from '../../../src/cli/tool-flags.js'
import { memoryStore } from '../../helpers/store.js'
import { connect, errorOf } from '../../helpers/mcp.js'
import { acknowledgeAt, countPending, deleteAnnotation } from '../../helpers/plugins.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { BUILTIN_NAMES, READ_ONLY_NAMES, without } from '../../helpers/tools.js'

const closers = useCleanups()

const READ_ONLY = READ_ONLY_NAMES
const ALL = BUILTIN_NAMES
const PLUGINS = [countPending, acknowledgeAt, deleteAnnotation]

/** What tools/list shows a real MCP client for these options. */
async function listed(options: ToolPolicy & { plugins?: typeof PLUGINS } = {}): Promise<string[]> {
  const store = memoryStore()
  const mcp = await connect(store, options)
  closers.push(() => mcp.close())
  return (await mcp.client.listTools()).tools.map((t) => t.name)
}

describe('profiles (what tools/list shows)', () => {
  it('default: every built-in tool', async () => {
    expect(await listed()).toEqual(ALL)
    expect(await listed({ profile: 'default' })).toEqual(ALL)
  })

  it('read-only: only tools marked readOnlyHint (queries and watches)', async () => {
    expect(await listed({ profile: 'read-only' })).toEqual(READ_ONLY)
    // Some tools are read-only and some are not, so the profile leaves something out.
    expect(READ_ONLY.length).toBeGreaterThan(0)
    expect(READ_ONLY.length).toBeLessThan(ALL.length)
  })

  it('full: every built-in tool', async () => {
    expect(await listed({ profile: 'full' })).toEqual(ALL)
  })

  it('an empty allow-list (and an empty deny-list) means the profile’s default', async () => {
    for (const profile of TOOL_PROFILES) {
      expect(await listed({ profile, allow: [], deny: [] })).toEqual(await listed({ profile }))
    }
  })
})

describe('allow and deny', () => {
  it('deny removes a tool from any profile', async () => {
    expect(await listed({ deny: ['dismiss', 'reply'] })).toEqual(without(ALL, 'dismiss', 'reply'))
    expect(await listed({ profile: 'read-only', deny: ['list_sessions'] })).toEqual(without(READ_ONLY, 'list_sessions'))
    expect(await listed({ profile: 'full', plugins: PLUGINS, deny: ['delete_annotation'] })).toEqual([...ALL, 'count_pending', 'acknowledge_at'])
  })

  it('deny wins over allow (it comes later in the pipeline)', async () => {
    expect(await listed({ plugins: PLUGINS, allow: ['delete_annotation'], deny: ['delete_annotation'] })).not.toContain('delete_annotation')
  })

  it('read-only removes a non-read-only tool even when it is allowed by name', async () => {
    expect(await listed({ profile: 'read-only', allow: ['acknowledge', 'get_session'] })).toEqual(READ_ONLY)
    expect(await listed({ profile: 'read-only', plugins: PLUGINS, allow: ['delete_annotation'] })).toEqual([...READ_ONLY, 'count_pending'])
  })

  it('unknown names in allow or deny: a clear error at construction naming them and listing the tools', () => {
    const store = memoryStore()
    let thrown: unknown
    try {
      createToolRegistry(store, { plugins: PLUGINS, allow: ['acknowledge', 'frobnicate', 'zap'] })
    } catch (e) {
      thrown = e
    }
    expect(thrown).toBeInstanceOf(ToolPolicyError)
    const error = thrown as ToolPolicyError
    expect(error.code).toBe('INVALID_PARAMS')
    expect(error.field).toBe('allow')
    expect(error.message).toBe(`allow: unknown tools "frobnicate", "zap". Available tools: ${[...ALL, 'count_pending', 'acknowledge_at', 'delete_annotation'].join(', ')}.`)
    expect(error.details).toMatchObject({ unknown: ['frobnicate', 'zap'] })
    expect(() => createServer(store, { deny: ['nope'] })).toThrow(/^deny: unknown tool "nope"\. Available tools: list_sessions, /)
    expect(() => createToolRegistry(store, { profile: 'admin' as ToolProfile })).toThrow(/^profile: "admin" is not a tool profile\. Profiles: default — .*; read-only — .*; full — .*\.$/)
  })
})

describe('privileged tools', () => {
  it('appear only when allowed by name, or under the full profile', async () => {
    expect(await listed({ plugins: PLUGINS })).not.toContain('delete_annotation')
    expect(await listed({ plugins: PLUGINS, allow: ['delete_annotation'] })).toEqual([...ALL, 'count_pending', 'acknowledge_at', 'delete_annotation'])
    expect(await listed({ profile: 'full', plugins: PLUGINS })).toContain('delete_annotation')
    expect(await listed({ profile: 'read-only', plugins: PLUGINS })).not.toContain('delete_annotation')
  })

  it('none of the built-in tools is privileged', () => {
    expect(BUILTIN_TOOLS.filter((t) => t.privileged)).toEqual([])
  })
})

describe('plugin tools go through the same pipeline', () => {
  const cases: [ToolProfile, string[]][] = [
    ['default', [...ALL, 'count_pending', 'acknowledge_at']],
    ['read-only', [...READ_ONLY, 'count_pending']],
    ['full', [...ALL, 'count_pending', 'acknowledge_at', 'delete_annotation']],
  ]
  for (const [profile, expected] of cases) {
    it(`profile ${profile}`, async () => {
      expect(await listed({ profile, plugins: PLUGINS })).toEqual(expected)
      // The pure pipeline says the same as tools/list.
      expect(resolveToolPolicy([...BUILTIN_TOOLS, ...PLUGINS], { profile }).map((t) => t.name)).toEqual(expected)
    })
  }

  it('a plugin tool can be denied like a built-in one', async () => {
    expect(await listed({ plugins: PLUGINS, deny: ['count_pending'] })).toEqual([...ALL, 'acknowledge_at'])
  })
})

describe('a tool that is not exposed is not callable', () => {
  it('over MCP: a denied or profile-hidden tool is UNKNOWN_TOOL with isError, and nothing changes', async () => {
    const store = memoryStore()
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const note = await store.addAnnotation({ sessionId: session.id, comment: 'Fix me' })
    const mcp = await connect(store, { profile: 'read-only', plugins: PLUGINS, deny: ['get_session'] })
    closers.push(() => mcp.close())
    for (const [name, args] of [
      ['acknowledge', { id: note.id }],
      ['get_session', { id: session.id }],
      ['delete_annotation', { id: note.id }],
      ['acknowledge_at', { id: note.id, expectedRev: note.rev }],
    ] as const) {
      const result = await mcp.call(name, args)
      expect(result.isError).toBe(true)
      const error = errorOf(result)
      expect(error.code).toBe('UNKNOWN_TOOL')
      expect(error.message).toContain(`Tool "${name}" is not available on this server (tool profile "read-only"`)
      expect(error.message).toContain(`Available tools: ${[...without(READ_ONLY, 'get_session'), 'count_pending'].join(', ')}.`)
    }
    expect(store.getAnnotation(note.id).status).toBe('pending')
    expect(store.rev).toBe(2)
    expect(mcp.client.getInstructions()).not.toContain('acknowledge')
    const ok = await mcp.call('count_pending', {})
    expect(ok.structuredContent).toEqual({ count: 1 })
  })

  it('in process: registry.call refuses it the same way', async () => {
    const registry = createToolRegistry(memoryStore(), { deny: ['resolve'] })
    const outcome = await registry.call('resolve', { id: 'x' })
    expect(outcome).toMatchObject({ ok: false, error: { code: 'UNKNOWN_TOOL' } })
    expect(registry.has('resolve')).toBe(false)
  })
})

describe('createServer', () => {
  it('refuses policy options next to a ready-made registry (they would be ignored)', async () => {
    const store = memoryStore()
    const registry = createToolRegistry(store, { profile: 'read-only' })
    expect(() => createServer(store, { registry, profile: 'full', deny: ['reply'] })).toThrow('createServer: profile, deny would be ignored next to registry')
    // Without those options, the server serves the registry it was given: its policy, its tools.
    const mcp = await connect(store, { registry })
    closers.push(() => mcp.close())
    expect((await mcp.client.listTools()).tools.map((t) => t.name)).toEqual(registry.names())
    expect(registry.names()).not.toContain('acknowledge')
  })
})

describe('parseToolPolicyFlags (the --profile/--allow/--deny helper for mcp and serve)', () => {
  it('parses comma lists and repeated flags, trims, drops empty names', () => {
    expect(parseToolPolicyFlags({})).toEqual({})
    expect(parseToolPolicyFlags({ profile: 'read-only', allow: ['get_session, list_sessions', 'watch_annotations'], deny: ['reply,,'] })).toEqual({
      profile: 'read-only',
      allow: ['get_session', 'list_sessions', 'watch_annotations'],
      deny: ['reply'],
    })
    expect(parseToolPolicyFlags({ allow: 'reply' })).toEqual({ allow: ['reply'] })
    expect(parseToolPolicyFlags({ allow: [''] })).toEqual({}) // empty: the profile's default
  })

  it('names the flag in its errors', () => {
    expect(() => parseToolPolicyFlags({ profile: 'nope' })).toThrow(/^--profile: "nope" is not a tool profile\. Profiles: default/)
    expect(() => parseToolPolicyFlags({ allow: ['unknown_tool'] })).toThrow(/^--allow: unknown tool "unknown_tool"\. Available tools: list_sessions, get_session/)
    expect(() => parseToolPolicyFlags({ deny: ['a,b'] })).toThrow(/^--deny: unknown tools "a", "b"\./)
  })

  it('checks names against the given catalogue (plugins included)', () => {
    expect(parseToolPolicyFlags({ allow: ['delete_annotation'] }, [...BUILTIN_TOOLS, ...PLUGINS])).toEqual({ allow: ['delete_annotation'] })
  })
})
