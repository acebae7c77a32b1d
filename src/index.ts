/**
 * Marginalia's public embedding API: what a program needs to open a store, list and call the
 * tools, and serve them over MCP or HTTP, documented in docs/guide/embedding.md. Everything
 * here is a promise to users; the rest of the package is internal and may change in any release.
 * A test (test/e2e/public-api.test.ts) lists these exports, so a change to them is deliberate.
 */

/** The zod 4 that plugin tools' schemas must be made with (a zod 3 schema is refused at registration). */
export { z } from 'zod'

/**
 * The data model: the zod schemas (and their types) of what the store's methods take and return,
 * and the words of its vocabulary (statuses, intents, severities, limits …).
 */
export {
  ANNOTATION_STATUSES,
  ATTACHMENT_KINDS,
  AUTHORS,
  IDENTITY_KINDS,
  IMAGE_MIMES,
  INTENTS,
  LIMITS,
  PAGE_ENTRY_KINDS,
  REPLY_KINDS,
  ROLES,
  SEVERITIES,
  AnnotationStatus,
  Intent,
  Severity,
  Author,
  Id,
  Timestamp,
  Rect,
  Attachment,
  PageEntry,
  PageContext,
  Fingerprint,
  TextQuote,
  ElementInfo,
  Viewport,
  SourceLocation,
  IdentityKind,
  Role,
  Identity,
  Actor,
  Reply,
  Session,
  Annotation,
  CreateSessionInput,
  AddAnnotationInput,
  AcknowledgeInput,
  ResolveInput,
  DismissInput,
  ReopenInput,
  ReplyInput,
  DeleteInput,
  type SessionWithAnnotations,
  type Credential,
  type CredentialKind,
  type AddIdentityInput,
  type NewCredentialInput,
} from './store/model.js'

/** The errors every surface reports: each has a stable `code` (ERROR_CODES lists them). */
export {
  ERROR_CODES,
  MarginaliaError,
  NotFoundError,
  InvalidTransitionError,
  ValidationError,
  ConflictError,
  CursorExpiredError,
  StoreDataError,
  StoreClosedError,
  StoreUnavailableError,
  StoreBusyError,
  type LockHolder,
  type ErrorCode,
  type EntityKind,
  type FieldIssue,
} from './store/errors.js'
export { StoreFileError } from './store/fs/errors.js'

/** The store's change stream (`store.changes$`, `changesSince`): one event type per kind, and the list of kinds. */
export {
  STORE_EVENT_TYPES,
  type StoreEvent,
  type StoreEventType,
  type SessionCreatedEvent,
  type AnnotationCreatedEvent,
  type AnnotationStatusChangedEvent,
  type AnnotationRepliedEvent,
  type AnnotationDeletedEvent,
  type AnnotationArchivedEvent,
  type IdentityAddedEvent,
  type IdentityRevokedEvent,
  type CredentialIssuedEvent,
  type CredentialEndedEvent,
  type CaptureRequestedEvent,
  type CaptureTakenEvent,
  type PublicCredential,
} from './store/events.js'

/**
 * Stores: `openStore` (a file, or a `postgres://` URL, or an adapter of your own), `createMemoryStore`
 * (no file, for tests), the `Store` they return, and the types of its options and answers.
 */
export { Store, createMemoryStore, type AnnotationQuery, type AnnotationSearch, type Page, type PageOptions, type StoreOptions, type MemoryStoreOptions, type IdKind, type ChangesSinceOptions } from './store/store.js'
export { openStore, type OpenStoreOptions } from './store/open.js'
/** What `openStore({ adapter })` takes: a persistence adapter of your own. */
export { type StoreAdapter, type StoreView, type Snapshot, type LoadResult, type Decision } from './store/persistence.js'
export { type ArchiveOptions, type ArchiveResult, type ArchiveFileInfo, type ArchiveLine, type ArchiveWrite, type ArchiveSink } from './store/archive.js'
export { type BlobStore, type BlobInfo, type StoredBlob } from './store/blobs/index.js'

/**
 * The tools: the one registry behind every transport (`list`, `call`, `callBatch`, OpenAI-style
 * function calling), `defineTool` for your own, the built-in tools' names, the profiles and the
 * policy error a wrong `allow`/`deny` raises.
 */
export {
  createToolRegistry,
  ToolRegistry,
  BUILTIN_TOOLS,
  type RegistryOptions,
  type ToolInfo,
  type CallOutcome,
  type CallOptions,
  type BatchCall,
  type OpenAITool,
  type OpenAIResponsesTool,
  type OpenAIToolsOptions,
  type OpenAIToolCall,
  type OpenAIToolMessage,
  type ServerInfo,
  type JsonSchema,
  type ToolService,
} from './tools/registry.js'
export { defineTool, type ToolDefinition, type ToolContext, type CommonTool } from './tools/define.js'
export { TOOL_ERROR_CODES, type ToolError, type ToolErrorCode } from './tools/result.js'
export { TOOL_PROFILES, ToolPolicyError, type ToolPolicy, type ToolProfile } from './tools/policy.js'

/** The MCP server (tools, resources and the work_loop prompt) for any transport. */
export { createServer, type ServerOptions } from './server.js'

/** The HTTP server: REST, live events, the overlay and the inbox, MCP over Streamable HTTP. */
export { startHttpServer, type HttpServer, type HttpServerOptions, type Presence } from './http/index.js'
