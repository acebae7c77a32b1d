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
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Variables } from '@modelcontextprotocol/sdk/shared/uriTemplate.js'
import { ErrorCode, McpError, SubscribeRequestSchema, UnsubscribeRequestSchema, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js'
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
/** The MCP error code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002

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
 * Register the resources and the resources/subscribe and resources/unsubscribe handlers on
 * `mcp`. The server must declare `resources: { subscribe: true, listChanged: true }`. The store
 * subscription starts when the client has initialized (or first subscribes) and ends when the
 * connection closes.
 */
/**
 * Read-after-write across processes, as tool calls and REST reads have it: a read that begins after
 * another process's write resolved sees it (synchronous when nothing can be new).
 */
export function afterCatchUp<T>(store: Store, read: () => T): T | Promise<T> {
  const catchingUp = store.catchUp()
  return catchingUp ? catchingUp.then(read) : read()
}

export function registerResources(mcp: McpServer, store: Store): void {
  const server = mcp.server
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
      if (!blob) throw new McpError(RESOURCE_NOT_FOUND, `No attachment ${clipEcho(sha)}.`, { uri: uri.href })
      return { contents: [{ uri: uri.href, mimeType: blob.mime, blob: Buffer.from(blob.bytes).toString('base64') }] }
    },
  )

  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    const { uri } = request.params
    const ref = parseResourceUri(uri)
    // A marginalia:// URI must name something that exists; other URIs (resources an embedder
    // registers) are tracked and notified by whoever owns them.
    if (!ref && uri.startsWith('marginalia:')) throw new McpError(ErrorCode.InvalidParams, `uri: "${uri}" is not a Marginalia resource. Resources: ${SESSIONS_URI}, ${SESSION_TEMPLATE}, ${ANNOTATION_TEMPLATE}.`)
    if (ref && ref.kind !== 'sessions') orNotFound(uri, () => (ref.kind === 'session' ? store.getSession(ref.id) : store.getAnnotation(ref.id)))
    subscribed.add(uri)
    start()
    return {}
  })

  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscribed.delete(request.params.uri)
    return {}
  })

  const start = (): void => {
    if (changes || store.closed) return
    changes = store.changes$.subscribe((event) => {
      if (!mcp.isConnected()) return stop()
      // Notifications to a client that went away are dropped (the next change tries again).
      for (const uri of urisChangedBy(event)) {
        if (subscribed.has(uri)) void server.sendResourceUpdated({ uri }).catch(() => {})
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
    if (e instanceof NotFoundError) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}. ${toToolError(e).message}`, { uri })
    throw e
  }
}

function variable(variables: Variables, uri: string): string {
  const raw = variables.id
  const id = typeof raw === 'string' ? decode(raw) : undefined
  if (id === undefined || id === '') throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}.`, { uri })
  return id
}

function decode(value: string): string | undefined {
  try {
    return decodeURIComponent(value)
  } catch {
    return undefined
  }
}
