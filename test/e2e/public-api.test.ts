/** The package's public surface: a change to this list is a change to what users may rely on. */
import { describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import path from 'node:path'
import { z as z3 } from 'zod/v3'
import * as api from '../../src/index.js'

const ROOT = path.resolve(import.meta.dirname, '../..')

/** What `import … from 'marginalia'` gives at run time (types are checked by the build, not listed here). */
const PUBLIC = [
  // zod 4, for plugin tools' schemas
  'z',
  // the data model: zod schemas of what the store takes and returns, and its vocabulary
  'ANNOTATION_STATUSES', 'ATTACHMENT_KINDS', 'AUTHORS', 'IDENTITY_KINDS', 'IMAGE_MIMES', 'INTENTS', 'LIMITS', 'PAGE_ENTRY_KINDS', 'REPLY_KINDS',
  'ROLES', 'SEVERITIES', 'AnnotationStatus', 'Intent', 'Severity', 'Author', 'Id', 'Timestamp', 'Rect', 'Attachment', 'PageEntry', 'PageContext',
  'Fingerprint', 'TextQuote', 'ElementInfo', 'Viewport', 'SourceLocation', 'IdentityKind', 'Role', 'Identity', 'Actor', 'Reply', 'Session',
  'Annotation', 'CreateSessionInput', 'AddAnnotationInput', 'AcknowledgeInput', 'ResolveInput', 'DismissInput', 'ReopenInput', 'ReplyInput',
  'DeleteInput',
  // the errors, with their codes
  'ERROR_CODES', 'MarginaliaError', 'NotFoundError', 'InvalidTransitionError', 'ValidationError', 'ConflictError', 'CursorExpiredError',
  'StoreDataError', 'StoreClosedError', 'StoreUnavailableError', 'StoreBusyError', 'StoreFileError',
  // the change stream's kinds
  'STORE_EVENT_TYPES',
  // stores
  'Store', 'createMemoryStore', 'openStore',
  // the tools
  'createToolRegistry', 'ToolRegistry', 'BUILTIN_TOOLS', 'defineTool', 'TOOL_ERROR_CODES', 'TOOL_PROFILES', 'ToolPolicyError',
  // the servers
  'createServer', 'startHttpServer',
]

describe('the public API', () => {
  it('exports exactly the documented names (internals like adapters, blob helpers, resource URIs and the status machine stay inside)', () => {
    expect(Object.keys(api).sort()).toEqual([...PUBLIC].sort())
  })

  it('the CommonJS build exports the same names', () => {
    const cjs = createRequire(import.meta.url)(path.join(ROOT, 'dist/index.cjs')) as Record<string, unknown>
    expect(Object.keys(cjs).sort()).toEqual([...PUBLIC].sort())
  })

  it('a zod 3 schema in a plugin tool is refused at registration, naming the tool and the fix', () => {
    const tool = {
      name: 'legacy_tool',
      title: 'Legacy',
      description: 'made with zod 3',
      input: z3.object({ x: z3.string() }),
      output: api.z.object({ ok: api.z.boolean() }),
      annotations: { readOnlyHint: true },
      handler: () => ({ ok: true }),
    }
    const store = api.createMemoryStore()
    expect(() => api.createToolRegistry(store, { plugins: [tool as unknown as api.ToolDefinition] })).toThrow(/plugins\[legacy_tool\]\.input.*this looks like a zod 3 schema; plugin tools need zod 4/)
    // The re-exported z is zod 4, the one plugin tools need.
    const ok = api.defineTool({ ...tool, input: api.z.object({ x: api.z.string() }) })
    expect(() => api.createToolRegistry(store, { plugins: [ok] })).not.toThrow()
    void store.close()
  })
})
