/** Defaults of `marginalia serve`, in a module of their own so the CLI can show them without loading the server. */
export const DEFAULT_PORT = 4848
export const DEFAULT_HOST = '127.0.0.1'
/** Largest accepted request body (1 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024
/** MCP sessions kept at once over Streamable HTTP; the least recently used idle one is ended first. */
export const DEFAULT_MAX_MCP_SESSIONS = 100
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
