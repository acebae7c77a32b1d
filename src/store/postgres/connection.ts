/** Connection helpers: which errors mean "the database is away", and URLs without secrets. */

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])

/** True for an error that says the server is unreachable or the connection died (not a SQL error). */
export function isUnavailable(e: unknown): boolean {
  if (!(e instanceof Error)) return false
  const code = (e as { code?: unknown }).code
  if (typeof code === 'string') {
    if (UNAVAILABLE_CODES.has(code)) return true
    // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now; class 08: connection exceptions.
    if (/^57P0[123]$/.test(code) || code.startsWith('08')) return true
  }
  return /Connection terminated|connection timeout|timeout expired|Client has encountered a connection error|not queryable/i.test(e.message)
}

export function describePg(e: unknown): string {
  if (e instanceof AggregateError && e.errors.length > 0) return describePg(e.errors[0])
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code
    return typeof code === 'string' && !e.message.includes(code) ? `${e.message} (${code})` : e.message
  }
  return String(e)
}

/** `postgres://user:secret@host/db?password=x` → `postgres://user@host/db` (no password, no query). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    u.password = ''
    u.search = ''
    return u.toString()
  } catch {
    return 'postgres://(unparsable URL)'
  }
}
