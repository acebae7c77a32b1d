/**
 * MCP resources: the store as JSON documents a client can read and subscribe to.
 *
 *   marginalia://sessions              every session                 { sessions, count }
 *   marginalia://sessions/{id}         a session and a page of summaries { session, annotations, total … }
 *   marginalia://annotations/{id}      one annotation                 { annotation }
 *
 * A subscribed client gets `notifications/resources/updated` for exactly the URIs it
 * subscribed to when a store event changes them, and every client gets
 * `notifications/resources/list_changed` when a session appears. Both are derived from
 * `store.changes$`, which carries other processes' changes too.
 */
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, ResourceTemplate, type McpServer, type ReadResourceResult, type Variables } from '@modelcontextprotocol/server'
import type { Subscription } from 'rxjs'
import { clipEcho, NotFoundError } from '../store/errors.js'
import { SHA256 } from '../store/blobs/blob-store.js'
import type { StoreEvent } from '../store/events.js'
import type { Store } from '../store/store.js'
import { toToolError } from '../tools/result.js'
import { DEFAULT_BYTE_BUDGET, DEFAULT_PAGE_LIMIT, fitPage } from '../views/page.js'
import { completeSessionIds } from './complete.js'

const RESOURCE_MIME_TYPE = 'application/json'
export const SESSIONS_URI = 'marginalia://sessions'
const SESSION_TEMPLATE = 'marginalia://sessions/{id}'
const ANNOTATION_TEMPLATE = 'marginalia://annotations/{id}'
const ATTACHMENT_TEMPLATE = 'marginalia://attachments/{id}'

export function sessionUri(id: string): string {
  return `marginalia://sessions/${encodeURIComponent(id)}`
}

export function annotationUri(id: string): string {
  return `marginalia://annotations/${encodeURIComponent(id)}`
}

export type ResourceRef = { kind: 'sessions' } | { kind: 'session'; id: string } | { kind: 'annotation'; id: string }

/** What a Marginalia resource URI points at; undefined for any other URI. */
export function parseResourceUri(uri: string): ResourceRef | undefined {
  if (uri === SESSIONS_URI) return { kind: 'sessions' }
  const match = /^marginalia:\/\/(sessions|annotations)\/([^/]+)$/.exec(uri)
  const id = match ? decode(match[2]!) : undefined
  if (!match || id === undefined) return undefined
  return match[1] === 'sessions' ? { kind: 'session', id } : { kind: 'annotation', id }
}

/** The resource URIs whose content an event changes (every kind of event is named: a new one must be placed here). */
export function urisChangedBy(event: StoreEvent): string[] {
  switch (event.type) {
    case 'session.created':
      return [SESSIONS_URI, sessionUri(event.sessionId)]
    case 'annotation.created':
    case 'annotation.status_changed':
    case 'annotation.replied':
    case 'annotation.deleted':
    case 'annotation.archived':
      return [annotationUri(event.annotationId), sessionUri(event.sessionId)]
    case 'identity.added':
    case 'identity.revoked':
    case 'credential.issued':
    case 'credential.ended':
    case 'capture.requested':
    case 'permission.requested':
    case 'permission.answered':
      return []
    case 'capture.taken':
      return event.attachTo === undefined && event.element === undefined ? [] : [annotationUri(event.annotationId), sessionUri(event.sessionId)]
    default: {
      const unknown: never = event
      throw new Error(`unknown event type ${JSON.stringify((unknown as { type?: unknown }).type)}`)
    }
  }
}

/**
 * Read-after-write across processes, as tool calls and REST reads have it: a read that begins after
 * another process's write resolved sees it (synchronous when nothing can be new).
 */
export function afterCatchUp<T>(store: Store, read: () => T): T | Promise<T> {
  const catchingUp = store.catchUp()
  return catchingUp ? catchingUp.then(read) : read()
}

export interface ResourceEventOptions {
  /**
   * `legacy`: a 2025 session; notifications/resources/updated go out for exactly the URIs the
   * client subscribed to (resources/subscribe), from its initialized notification on.
   * `modern`: a 2026-07-28 connection; every change is sent at once and the serving entry routes
   * it onto the client's subscriptions/listen streams (which carry the URI filter).
   */
  era: 'legacy' | 'modern'
  /** Forward store changes at all (false: the serving entry publishes them itself). */
  events: boolean
}

/**
 * Register the resources and the resources/subscribe and resources/unsubscribe handlers on
 * `mcp`. The server must declare `resources: { subscribe: true, listChanged: true }`. The store
 * subscription starts when a 2025 client has initialized (or first subscribes), or at once for
 * a 2026-07-28 connection, and ends when the connection closes.
 */
export function registerResources(mcp: McpServer, store: Store, options: ResourceEventOptions = { era: 'legacy', events: true }): void {
  const server = mcp.server
  // Resources an embedder registers later (extendServer) are served too: subscribe accepts them.
  const others: Array<(uri: string) => boolean> = []
  const register = mcp.registerResource.bind(mcp) as (...args: unknown[]) => unknown
  mcp.registerResource = ((name: string, uriOrTemplate: string | ResourceTemplate, ...rest: unknown[]) => {
    if (typeof uriOrTemplate === 'string') {
      if (!uriOrTemplate.startsWith('marginalia:')) others.push((uri) => uri === uriOrTemplate)
    } else if (!uriOrTemplate.uriTemplate.toString().startsWith('marginalia:')) others.push((uri) => uriOrTemplate.uriTemplate.match(uri) !== null)
    return register(name, uriOrTemplate, ...rest)
  }) as McpServer['registerResource']
  const subscribed = new Set<string>()
  let changes: Subscription | undefined

  mcp.registerResource(
    'sessions',
    SESSIONS_URI,
    { title: 'Sessions', description: 'Every annotation session (one per annotated page), oldest first: { sessions, count }.', mimeType: RESOURCE_MIME_TYPE },
    (uri) =>
      afterCatchUp(store, () => {
        const sessions = store.listSessions()
        return jsonContents(uri.href, { sessions, count: sessions.length })
      }),
  )

  mcp.registerResource(
    'session',
    new ResourceTemplate(SESSION_TEMPLATE, {
      complete: { id: (value) => completeSessionIds(store, value) },
      list: () =>
        afterCatchUp(store, () => ({
          resources: store.listSessions().map((s) => ({
            uri: sessionUri(s.id),
            name: s.url,
            title: s.name ?? s.url,
            description: `Session ${s.id}: ${store.countPending(s.id)} pending annotation(s).`,
            mimeType: RESOURCE_MIME_TYPE,
          })),
        })),
    }),
    {
      title: 'Session',
      description: `One session and its first ${DEFAULT_PAGE_LIMIT} annotations as summaries, as get_session returns them: { session, annotations, count, total, nextCursor? }.`,
      mimeType: RESOURCE_MIME_TYPE,
    },
    (uri, variables) =>
      afterCatchUp(store, () => read(uri.href, () => {
        const { annotations: _all, ...session } = store.getSession(variable(variables, uri.href))
        // Bounded like a tool result: a session can hold 100 000 annotations.
        const page = fitPage(store.pageAnnotations({ sessionId: session.id }, { limit: DEFAULT_PAGE_LIMIT }), 'summary', DEFAULT_BYTE_BUDGET)
        return { session, ...page }
      })),
  )

  mcp.registerResource(
    'annotation',
    // Not enumerated in resources/list: a store can hold 100 000 of them. Sessions list theirs.
    new ResourceTemplate(ANNOTATION_TEMPLATE, { list: undefined }),
    { title: 'Annotation', description: 'One annotation with its status and replies: { annotation }.', mimeType: RESOURCE_MIME_TYPE },
    (uri, variables) => afterCatchUp(store, () => read(uri.href, () => ({ annotation: store.getAnnotation(variable(variables, uri.href)) }))),
  )

  mcp.registerResource(
    'attachment',
    // Not enumerated: annotations name theirs (attachments[].sha256). Immutable, so never updated.
    new ResourceTemplate(ATTACHMENT_TEMPLATE, { list: undefined }),
    { title: 'Attachment', description: 'An image attached to an annotation or reply (a screenshot or a pasted image), by its sha256.' },
    async (uri, variables) => {
      const sha = variable(variables, uri.href)
      const blob = SHA256.test(sha) ? await store.blobs.get(sha) : undefined
      if (!blob) throw new ResourceNotFoundError(uri.href, `Resource not found: ${uri.href}. No attachment ${clipEcho(sha)}.`)
      return { contents: [{ uri: uri.href, mimeType: blob.mime, blob: Buffer.from(blob.bytes).toString('base64') }] }
    },
  )

  // Subscribe answers like read: a URI this server does not serve is refused with the same
  // not-found error (resources an embedder adds, such as an app's ui:// page, never change).
  server.setRequestHandler('resources/subscribe', async (request) => {
    const { uri } = request.params
    await afterCatchUp(store, () => undefined)
    if (!others.some((serves) => serves(uri))) await assertServed(store, uri)
    subscribed.add(uri)
    start()
    return {}
  })

  server.setRequestHandler('resources/unsubscribe', (request) => {
    subscribed.delete(request.params.uri)
    return {}
  })

  const start = (): void => {
    if (changes || store.closed || !options.events) return
    changes = store.changes$.subscribe((event) => {
      if (!mcp.isConnected()) return stop()
      // Notifications to a client that went away are dropped (the next change tries again).
      for (const uri of urisChangedBy(event)) {
        if (options.era === 'modern' || subscribed.has(uri)) void server.sendResourceUpdated({ uri }).catch(() => {})
      }
      if (event.type === 'session.created') void server.sendResourceListChanged().catch(() => {})
    })
  }
  const stop = (): void => {
    changes?.unsubscribe()
    changes = undefined
    subscribed.clear()
  }

  // Chain onto whatever else is hooked here (another module may watch these too).
  const onInitialized = server.oninitialized
  server.oninitialized = () => {
    start()
    onInitialized?.()
  }
  const onClose = server.onclose
  server.onclose = () => {
    stop()
    onClose?.()
  }
  // A 2026-07-28 connection has no initialized notification: its changes flow from the start.
  if (options.era === 'modern') start()
}

/**
 * Throw what resources/read would for a URI this server cannot read: an unparseable URI is invalid
 * params, a well-formed one that names nothing here is resource-not-found (one code for every
 * unknown resource, Marginalia's or not).
 */
async function assertServed(store: Store, uri: string): Promise<void> {
  try {
    new URL(uri)
  } catch {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Resource URI ${uri} is invalid`, { uri, reason: 'invalid_uri' })
  }
  const attachment = /^marginalia:\/\/attachments\/([^/]+)$/.exec(uri)
  if (attachment) {
    const sha = decode(attachment[1]!)
    if (sha !== undefined && SHA256.test(sha) && (await store.blobs.get(sha))) return
    throw new ResourceNotFoundError(uri, `Resource not found: ${uri}. Attachments: ${ATTACHMENT_TEMPLATE} with the sha256 an annotation names.`)
  }
  const ref = parseResourceUri(uri)
  if (!ref) throw new ResourceNotFoundError(uri, `Resource not found: ${uri}. Resources: ${SESSIONS_URI}, ${SESSION_TEMPLATE}, ${ANNOTATION_TEMPLATE}, ${ATTACHMENT_TEMPLATE}.`)
  if (ref.kind !== 'sessions') orNotFound(uri, () => (ref.kind === 'session' ? store.getSession(ref.id) : store.getAnnotation(ref.id)))
}

function jsonContents(uri: string, data: unknown): ReadResourceResult {
  return { contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: JSON.stringify(data) }] }
}

function read(uri: string, get: () => unknown): ReadResourceResult {
  return jsonContents(uri, orNotFound(uri, get))
}

/** Turn "no such session/annotation" into the MCP resource-not-found error. */
function orNotFound<T>(uri: string, get: () => T): T {
  try {
    return get()
  } catch (e) {
    if (e instanceof NotFoundError) throw new ResourceNotFoundError(uri, `Resource not found: ${uri}. ${toToolError(e).message}`)
    throw e
  }
}

function variable(variables: Variables, uri: string): string {
  const raw = variables.id
  const id = typeof raw === 'string' ? decode(raw) : undefined
  if (id === undefined || id === '') throw new ResourceNotFoundError(uri, `Resource not found: ${uri}.`)
  return id
}

function decode(value: string): string | undefined {
  try {
    return decodeURIComponent(value)
  } catch {
    return undefined
  }
}
