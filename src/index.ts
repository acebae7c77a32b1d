/**
 * Marginalia's public embedding API: everything here is a promise to users, documented in the
 * README ("Embedding"). The rest of the package is internal and may change in any release; a
 * test (test/e2e/public-api.test.ts) lists these exports so a change to them is deliberate.
 *
 *   - a store: `openStore` (a file), `createMemoryStore`, the `Store` class, its adapters and options;
 *   - the data model: zod schemas and their types (Annotation, Session, Reply, inputs), statuses;
 *   - the errors every surface reports (MarginaliaError and its subclasses, ERROR_CODES);
 *   - events and watching: StoreEvent, watchFor, watchPending;
 *   - the tools: createToolRegistry, defineTool, BUILTIN_TOOLS, profiles and policy;
 *   - the MCP server for any transport (`createServer`) and the HTTP server (`startHttpServer`);
 *   - `z`: the zod 4 that plugin tools' schemas must be made with.
 */
export { z } from 'zod'

// The data model.
export * from './store/model.js'
export { ERROR_CODES, MarginaliaError, NotFoundError, InvalidTransitionError, ValidationError, ConflictError, CursorExpiredError, StoreDataError, StoreClosedError, StoreUnavailableError, StoreBusyError, type LockHolder, type ErrorCode, type EntityKind, type FieldIssue } from './store/errors.js'
export { StoreFileError } from './store/fs/errors.js'
export { BlobError, FileBlobStore, MemoryBlobStore, storeImage, sniffImage, type BlobStore, type BlobInfo, type StoredBlob } from './store/blobs/index.js'
export { STORE_EVENT_TYPES, isStoreEvent, type StoreEvent, type StoreEventType, type SessionCreatedEvent, type AnnotationCreatedEvent, type AnnotationStatusChangedEvent, type AnnotationRepliedEvent, type AnnotationDeletedEvent, type AnnotationArchivedEvent, type IdentityAddedEvent, type IdentityRevokedEvent, type CredentialIssuedEvent, type CredentialEndedEvent, type PublicCredential } from './store/events.js'
export { TRANSITIONS, allowedFrom, canApply, type Action, type StatusAction } from './store/machine.js'

// Stores.
export { Store, createMemoryStore, type AnnotationQuery, type Page, type PageOptions, type StoreOptions, type MemoryStoreOptions, type IdKind, type ChangesSinceOptions } from './store/store.js'
export { openStore, type OpenStoreOptions } from './store/open.js'
export { type StoreAdapter, type StoreView, type Snapshot, type LoadResult, type Decision } from './store/persistence.js'
export { type StoreState } from './store/reducer.js'
export { MemoryAdapter, type MemoryAdapterOptions } from './store/memory-adapter.js'
export { FileAdapter, DEFAULT_STORE_FILE, type FileAdapterOptions } from './store/file/file-adapter.js'
export { DEFAULT_WATCH_TIMEOUT_MS, MAX_WATCH_TIMEOUT_MS, watchFor, watchPending, type Watchable, type WatchOptions, type WatchOutcome, type PendingSource, type PendingWatchResult } from './store/watch.js'
export { DEFAULT_ARCHIVE_AGE_MS, type ArchiveOptions, type ArchiveResult, type ArchiveFileInfo, type ArchiveLine, type ArchiveWrite, type ArchiveSink } from './store/archive.js'

// The tools: the one list behind every transport, and the in-process API.
export {
  ToolRegistry,
  createToolRegistry,
  BUILTIN_TOOLS,
  SERVER_CAPABILITIES,
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
export { TOOL_ERROR_CODES, ToolErrorSchema, type ToolError, type ToolErrorCode } from './tools/result.js'
export { TOOL_PROFILES, PROFILE_SUMMARIES, ToolPolicyError, resolveToolPolicy, inProfile, isReadOnlyTool, isPrivilegedTool, type ToolPolicy, type ToolProfile } from './tools/policy.js'

// The MCP server: tools, resources and the work_loop prompt, for any transport.
export { createServer, type ServerOptions } from './mcp/server.js'
export { SESSIONS_URI, sessionUri, annotationUri, parseResourceUri, urisChangedBy, RESOURCE_MIME_TYPE, type ResourceRef } from './mcp/resources.js'
export { WORK_LOOP_PROMPT } from './mcp/prompts.js'

// The HTTP server: REST, live events, the overlay, MCP over Streamable HTTP.
export { startHttpServer, DEFAULT_HOST, DEFAULT_PORT, type HttpServer, type HttpServerOptions, type Presence } from './http/index.js'
