/**
 * What the page may ask the extension's service worker to do: a fixed set of named operations,
 * never a URL. The page's world is untrusted — a site's own script can replace any global the
 * overlay uses (`encodeURIComponent`, `JSON`, `URL`, `fetch`, prototypes) — so the worker takes an
 * operation's name and its ids, checks each id against its kind's pattern, and builds the URL
 * itself from the configured server. Admin, people, agent and sign-in routes are no operation.
 *
 * The page side (`operationOf`) turns the overlay's requests into operations; what it says is
 * only a request: `requestFor` (the worker's side) trusts none of it.
 */

/** The operations, each with the method and path the worker builds for it. */
export const OPERATIONS = {
  health: 'GET /health',
  signOut: 'POST /auth/sign-out',
  listSessions: 'GET /api/sessions',
  readSession: 'GET /api/sessions/:session',
  createSession: 'POST /api/sessions',
  addAnnotation: 'POST /api/sessions/:session/annotations',
  sessionEvents: 'GET /api/sessions/:session/events',
  newSessionEvents: 'GET /api/events',
  readAnnotation: 'GET /api/annotations/:annotation',
  reply: 'POST /api/annotations/:annotation/replies',
  reopen: 'POST /api/annotations/:annotation/reopen',
  remove: 'DELETE /api/annotations/:annotation',
  captured: 'POST /api/annotations/:annotation/captures',
  upload: 'POST /api/attachments',
} as const

type OperationName = keyof typeof OPERATIONS

/** One request of the page: an operation, the ids its path needs, its query and body. */
export interface Operation {
  op: OperationName
  session?: string
  annotation?: string
  query?: Record<string, string>
  /** A JSON body, as text. */
  body?: string
  /** A binary body (an image upload), base64, with its type. */
  base64?: string
  contentType?: string
}

/** What a session id and an annotation id look like: the store's prefix, an underscore, letters and digits. */
const ID_PATTERNS = { session: /^ses_[A-Za-z0-9]{1,64}$/, annotation: /^ann_[A-Za-z0-9]{1,64}$/ } as const

/** Query parameters an operation may carry, each with the values it may take. */
const QUERY: Partial<Record<OperationName, Record<string, RegExp>>> = {
  // url: the page whose sessions the overlay looks for (its origin and path, as sessions keep it).
  listSessions: { limit: /^[0-9]{1,4}$/, cursor: /^[A-Za-z0-9_.~-]{1,200}$/, url: /^https?:\/\/\S{1,4000}$/ },
  readSession: { limit: /^[0-9]{1,4}$/, cursor: /^[A-Za-z0-9_.~-]{1,200}$/, status: /^[a-z_]{1,20}$/ },
  sessionEvents: { lastEventId: /^[0-9]{1,15}$/ },
  newSessionEvents: { lastEventId: /^[0-9]{1,15}$/ },
}
const JSON_BODY = new Set<OperationName>(['createSession', 'addAnnotation', 'reply', 'reopen', 'captured'])
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'application/octet-stream'])
const MAX_BODY = 8 * 1024 * 1024

export class OperationRefused extends Error {
  constructor(what: string) {
    super(`The extension refused the request: ${what}.`)
    this.name = 'OperationRefused'
  }
}

/** The request the worker sends for `raw` (anything the page posted), to `server`; OperationRefused for anything else. */
export function requestFor(raw: unknown, server: string): { url: string; method: string; contentType?: string; body?: string | Uint8Array<ArrayBuffer>; op: Operation } {
  if (typeof raw !== 'object' || raw === null) throw new OperationRefused('not an operation')
  const input = raw as Record<string, unknown>
  const name = input.op
  if (typeof name !== 'string' || !Object.hasOwn(OPERATIONS, name)) throw new OperationRefused(`no operation ${JSON.stringify(String(name)).slice(0, 60)}`)
  const op: Operation = { op: name as OperationName }
  const [method, template] = OPERATIONS[op.op].split(' ') as [string, string]
  let path = template
  for (const kind of ['session', 'annotation'] as const) {
    if (!template.includes(`:${kind}`)) continue
    const id = input[kind]
    if (typeof id !== 'string' || !ID_PATTERNS[kind].test(id)) throw new OperationRefused(`${op.op} needs a ${kind} id`)
    op[kind] = id
    path = path.replace(`:${kind}`, id)
  }
  const allowed = QUERY[op.op] ?? {}
  const params = new URLSearchParams()
  if (input.query !== undefined) {
    if (typeof input.query !== 'object' || input.query === null) throw new OperationRefused('a query is a set of names and values')
    op.query = {}
    for (const [k, v] of Object.entries(input.query)) {
      const pattern = Object.hasOwn(allowed, k) ? allowed[k] : undefined
      if (!pattern || typeof v !== 'string' || !pattern.test(v)) throw new OperationRefused(`${op.op} takes no ${k.slice(0, 40)}=${String(v).slice(0, 40)}`)
      op.query[k] = v
      params.set(k, v)
    }
  }
  const base = server.replace(/\/+$/, '')
  const search = params.toString()
  const url = `${base}${path}${search === '' ? '' : `?${search}`}`
  if (JSON_BODY.has(op.op)) {
    if (typeof input.body !== 'string' || input.body.length > MAX_BODY) throw new OperationRefused(`${op.op} needs a JSON body`)
    let parsed: unknown
    try {
      parsed = JSON.parse(input.body)
    } catch {
      throw new OperationRefused(`${op.op} needs a JSON body`)
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new OperationRefused(`${op.op} needs a JSON object`)
    op.body = input.body
    return { url, method, contentType: 'application/json', body: input.body, op }
  }
  if (op.op === 'upload') {
    if (typeof input.base64 !== 'string' || input.base64.length > MAX_BODY * 1.4) throw new OperationRefused('upload needs an image')
    const type = typeof input.contentType === 'string' && IMAGE_TYPES.has(input.contentType) ? input.contentType : 'application/octet-stream'
    const raw = atob(input.base64)
    const bytes = new Uint8Array(raw.length)
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i)
    return { url, method, contentType: type, body: bytes, op }
  }
  return { url, method, op }
}

/**
 * The operation for one of the overlay's requests (`url` under `server`), or undefined when it is
 * none. Runs in the page: a convenience for the overlay, never a check.
 */
export function operationOf(url: string, method: string, server: string): Operation | undefined {
  const base = server.replace(/\/+$/, '')
  if (!url.startsWith(`${base}/`)) return undefined
  const rest = url.slice(base.length)
  const q = rest.indexOf('?')
  const path = q < 0 ? rest : rest.slice(0, q)
  const query: Record<string, string> = {}
  if (q >= 0) for (const [k, v] of new URLSearchParams(rest.slice(q + 1))) query[k] = v
  const parts = path.split('/').map((p) => {
    try {
      return decodeURIComponent(p)
    } catch {
      return p
    }
  })
  for (const name of Object.keys(OPERATIONS) as OperationName[]) {
    const [m, template] = OPERATIONS[name].split(' ') as [string, string]
    if (m !== method.toUpperCase()) continue
    const want = template.split('/')
    if (want.length !== parts.length) continue
    const op: Operation = { op: name }
    if (want.every((w, i) => (w === ':session' ? ((op.session = parts[i]), true) : w === ':annotation' ? ((op.annotation = parts[i]), true) : w === parts[i]))) {
      if (Object.keys(query).length > 0) op.query = query
      return op
    }
  }
  return undefined
}
