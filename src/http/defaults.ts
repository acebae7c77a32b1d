/** Defaults of `marginalia serve`, in a module of their own so the CLI can show them without loading the server. */
export const DEFAULT_PORT = 4848
export const DEFAULT_HOST = '127.0.0.1'
/** Largest accepted request body (1 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024
