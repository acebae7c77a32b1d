/** The package's public surface: a change to this list is a change to what users may rely on. */
import { describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import path from 'node:path'
import { z as z3 } from 'zod/v3'
import * as api from '../../src/index.js'

const ROOT = path.resolve(import.meta.dirname, '../..')

const PUBLIC = [
  'ANNOTATION_STATUSES', 'AUTHORS', 'AcknowledgeInput', 'AddAnnotationInput', 'Annotation', 'AnnotationStatus', 'Author', 'BUILTIN_TOOLS',
  'ConflictError', 'CreateSessionInput', 'CursorExpiredError', 'DEFAULT_ARCHIVE_AGE_MS', 'DEFAULT_HOST', 'DEFAULT_PORT', 'DEFAULT_STORE_FILE',
  'DEFAULT_WATCH_TIMEOUT_MS', 'DeleteInput', 'DismissInput', 'ERROR_CODES', 'ElementInfo', 'FileAdapter', 'INTENTS', 'Id', 'Intent',
  'InvalidTransitionError', 'LIMITS', 'MAX_WATCH_TIMEOUT_MS', 'MarginaliaError', 'MemoryAdapter', 'NotFoundError', 'PROFILE_SUMMARIES',
  'REPLY_KINDS', 'RESOURCE_MIME_TYPE', 'Rect', 'ReopenInput', 'Reply', 'ReplyInput', 'ResolveInput', 'SERVER_CAPABILITIES', 'SESSIONS_URI',
  'SEVERITIES', 'STORE_EVENT_TYPES', 'Session', 'Severity', 'SourceLocation', 'Store', 'StoreClosedError', 'StoreDataError', 'StoreFileError', 'StoreUnavailableError', 'StoreBusyError',
  'TOOL_ERROR_CODES', 'TOOL_PROFILES', 'TRANSITIONS', 'Timestamp', 'ToolErrorSchema', 'ToolPolicyError', 'ToolRegistry', 'ValidationError',
  'Viewport', 'WORK_LOOP_PROMPT', 'allowedFrom', 'annotationUri', 'canApply', 'createMemoryStore', 'createServer', 'createToolRegistry',
  'defineTool', 'inProfile', 'isPrivilegedTool', 'isReadOnlyTool', 'isStoreEvent', 'openStore', 'parseResourceUri', 'resolveToolPolicy',
  'sessionUri', 'startHttpServer', 'urisChangedBy', 'watchFor', 'watchPending', 'z',
  // wave 2: attachments (screenshots and pasted images), their blob stores, and the page's log
  'ATTACHMENT_KINDS', 'Attachment', 'BlobError', 'FileBlobStore', 'IMAGE_MIMES', 'MemoryBlobStore', 'PAGE_ENTRY_KINDS', 'PageContext',
  'PageEntry', 'sniffImage', 'storeImage',
  // wave 2: anchoring (issue 21): an element's fingerprint and a text selection's quote
  'Fingerprint', 'TextQuote',
  // wave 2: the team inbox (issue 23): who did what, the people and agents a store knows
  'Actor', 'AddIdentityInput', 'CREDENTIAL_END_REASONS', 'CREDENTIAL_KINDS', 'CredentialKind', 'IDENTITY_KINDS', 'Identity', 'IdentityKind',
  'NewCredentialInput', 'ROLES', 'Role',
]

describe('the public API', () => {
  it('exports exactly the documented names (internals like shardGet, orderKey, appendArchiveLines stay inside)', () => {
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
