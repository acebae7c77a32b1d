/** Defaults of `marginalia serve`, in a module of their own so the CLI can show them without loading the server. */
export const DEFAULT_PORT = 4848
export const DEFAULT_HOST = '127.0.0.1'
/** Largest accepted request body (1 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024
/** An MCP session (2025 revisions) with no request this long is ended. */
export const DEFAULT_MCP_IDLE_TIMEOUT_MS = 5 * 60 * 1000
/** MCP sessions kept at once over Streamable HTTP (each holds an MCP server, ~44 KB of heap); the least recently used idle one is ended first. */
export const DEFAULT_MAX_MCP_SESSIONS = 100
/** MCP sessions one person or agent keeps at once (with sign-in on): a new one ends that caller's own oldest idle one. */
export const DEFAULT_MAX_MCP_SESSIONS_PER_IDENTITY = 16
/** Streams (event streams, MCP requests and streams) one person or agent has open at once (with sign-in on). */
export const DEFAULT_MAX_STREAMS_PER_IDENTITY = 32
/** Failed authentications per client address: sustained per second, and the burst. Over it, no key is derived. */
export const DEFAULT_AUTH_FAILURES_PER_SECOND = 1
export const DEFAULT_AUTH_FAILURE_BURST = 20
/** A request's headers must arrive within this (slowloris defence). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000
/** A whole request (headers and body) must arrive within this. Streams are not limited once the request is in. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
/** An event-stream client that owes more than this is dropped (it reconnects with Last-Event-ID). */
export const DEFAULT_SSE_MAX_BUFFERED_BYTES = 1024 * 1024
/** Unreferenced upload bytes one caller may hold within the window (uploads.ts). */
export const DEFAULT_UPLOAD_QUOTA_BYTES = 50 * 1024 * 1024
export const DEFAULT_UPLOAD_WINDOW_MS = 60 * 60 * 1000
/** An upload nothing references is removed after this. */
export const DEFAULT_UPLOAD_GRACE_MS = 10 * 60 * 1000
/** Uploads are refused when the disk under a file store's attachments would keep less free. */
export const DEFAULT_MIN_FREE_BYTES = 64 * 1024 * 1024
