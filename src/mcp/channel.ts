/**
 * Claude Code's channel on a `marginalia mcp` session: the person's news pushed into the agent's
 * conversation while it works on something else, and the agent's permission prompts relayed to
 * the person's page.
 *
 * - Declared as `capabilities.experimental['claude/channel']` and `['claude/channel/permission']`
 *   on a 2025 session (initialize: the handshake Claude Code speaks); Claude Code listens when it
 *   was launched with `--dangerously-load-development-channels server:<name>`.
 * - Pushes `notifications/claude/channel` `{ content, meta }` for each new pending annotation and
 *   each reply of the person on an annotation the agent touched (acknowledged, replied to).
 *   `content` is short and factual; `meta` holds `annotation_id`, `file`, `line`, `url` (strings).
 * - Takes `notifications/claude/channel/permission_request` (`request_id`, `tool_name`,
 *   `description`, `input_preview`), writes it to the store for the person's page, and sends the
 *   person's answer back as `notifications/claude/channel/permission` `{ request_id, behavior }`.
 *
 * The told ledger (`told.json`, src/store/told.ts) keeps pushes single across paths: an annotation
 * this agent was already handed (by a wait of any session, a hook, the monitor, another channel)
 * is not pushed, and, when `countsAsTold` (the person said Claude Code listens to this channel),
 * each push is recorded so the hooks and the monitor do not push it again. While a wait of this
 * session runs, a push waits for it (the wait hands the annotation over; src/mcp/deliveries.ts).
 * An annotation no longer pending (acknowledged, resolved, dismissed) is never pushed.
 */
import { z } from 'zod'
import type { McpServer } from '@modelcontextprotocol/server'
import type { Subscription } from 'rxjs'
import type { Annotation, Reply } from '../store/model.js'
import type { Store } from '../store/store.js'
import type { StoreEvent } from '../store/events.js'
import type { ToldLedger } from '../store/told.js'
import { Deliveries } from './deliveries.js'
import { PERMISSION_LIMITS } from '../store/permissions.js'

const CHANNEL_METHOD = 'notifications/claude/channel'
const PERMISSION_REQUEST_METHOD = 'notifications/claude/channel/permission_request'
const PERMISSION_METHOD = 'notifications/claude/channel/permission'
/** The capabilities a channel declares (experimental: Claude Code's own extension). */
export const CHANNEL_CAPABILITIES = { 'claude/channel': {}, 'claude/channel/permission': {} } as const
/** The ledger's key for pushes to Claude Code when the session is not known: every session of it. */
const CHANNEL_LEDGER_KEY = 'claude:*'

/** The comment or reply quoted in a push is clipped here: the agent reads the rest with get_annotation. */
const QUOTE_CHARS = 400

export interface ChannelOptions {
  /** The ledger of what was told to which agent session (the file store's folder); none on PostgreSQL. */
  ledger?: ToldLedger | undefined
  /** Record each push in the ledger (Claude Code listens to this channel: it was launched with the channel flag). */
  countsAsTold?: boolean
  /** Where failures to write or send go (stderr). */
  log?: (message: string) => void
  /** This session's deliveries: pushes wait for its running waits and skip what was handed (src/mcp/deliveries.ts). */
  deliveries?: Deliveries
}

/** The permission request as Claude Code sends it; longer texts are clipped, not refused (the prompt still counts). */
const PermissionRequestParams = z.looseObject({
  request_id: z.string().regex(/^[A-Za-z0-9_-]+$/).max(PERMISSION_LIMITS.requestId),
  tool_name: z.string().min(1).transform((s) => s.slice(0, PERMISSION_LIMITS.toolName)),
  description: z.string().optional().transform((s) => (s ?? '').slice(0, PERMISSION_LIMITS.description)),
  input_preview: z.string().optional().transform((s) => (s ?? '').slice(0, PERMISSION_LIMITS.inputPreview)),
})

/**
 * Attach the channel to a server instance of a 2025 session (its capabilities must include
 * CHANNEL_CAPABILITIES). Pushes start once the client is initialized and stop when it closes.
 */
export function attachChannel(mcp: McpServer, store: Store, options: ChannelOptions = {}): void {
  const server = mcp.server
  const log = options.log ?? (() => {})
  /** Permission requests this session relayed and not yet answered. */
  const mine = new Set<string>()
  /** Replies already pushed (a reply event seen twice — a replay — is pushed once). */
  const pushedReplies = new Set<string>()
  let subscription: Subscription | undefined

  const send = (method: string, params: Record<string, unknown>): void => {
    // A client gone mid-push loses nothing it can still get: its next wait or hook gives the same.
    server.notification({ method, params } as never).catch((error: unknown) => log(`channel: ${method} not sent: ${error instanceof Error ? error.message : String(error)}`))
  }

  const deliveries = options.deliveries ?? new Deliveries(options.ledger, log)
  const pushAnnotation = (created: Annotation): void => {
    if (created.status !== 'pending' || created.author === 'agent') return
    // While a wait of this session runs, it hands the annotation over itself: decide after it.
    deliveries.whenNoWait(() => {
      const a = current(store, created.id)
      if (a?.status !== 'pending' || deliveries.told(CHANNEL_LEDGER_KEY, a.id)) return // taken, or handed by another path
      // Recorded only when Claude Code listens (the flag): a push nobody hears must not silence the hooks.
      if (options.countsAsTold) deliveries.record(CHANNEL_LEDGER_KEY, [a.id])
      send(CHANNEL_METHOD, { content: annotationContent(a), meta: metaOf(a) })
    })
  }

  const pushReply = (a: Annotation, reply: Reply): void => {
    if (reply.author !== 'human' || pushedReplies.has(reply.id) || !touchedByAgent(a)) return
    pushedReplies.add(reply.id)
    if (pushedReplies.size > 1_000) pushedReplies.delete(pushedReplies.values().next().value!)
    send(CHANNEL_METHOD, { content: replyContent(a, reply), meta: metaOf(a) })
  }

  const onEvent = (e: StoreEvent): void => {
    switch (e.type) {
      case 'annotation.created':
        pushAnnotation(e.annotation)
        return
      case 'annotation.replied':
      case 'annotation.status_changed': {
        if (!e.reply || e.reply.author !== 'human') return
        const a = current(store, e.annotationId)
        if (a) pushReply(a, e.reply)
        return
      }
      case 'permission.answered':
        if (!mine.delete(e.requestId)) return
        send(PERMISSION_METHOD, { request_id: e.requestId, behavior: e.behavior })
        return
      default:
        return
    }
  }

  server.setNotificationHandler(PERMISSION_REQUEST_METHOD, { params: PermissionRequestParams }, async (params) => {
    mine.add(params.request_id)
    const agent = server.getClientVersion()?.name
    try {
      await store.requestPermission({
        requestId: params.request_id,
        toolName: params.tool_name,
        description: params.description,
        inputPreview: params.input_preview,
        ...(agent ? { agent: agent.slice(0, PERMISSION_LIMITS.agent) } : {}),
      })
    } catch (error) {
      mine.delete(params.request_id)
      log(`channel: permission request ${params.request_id} not relayed: ${error instanceof Error ? error.message : String(error)}`)
    }
  })

  const initialized = server.oninitialized
  server.oninitialized = () => {
    initialized?.()
    subscription ??= store.changes$.subscribe(onEvent)
  }
  const closed = server.onclose
  server.onclose = () => {
    subscription?.unsubscribe()
    closed?.()
  }
}

/** The annotation as the store holds it now (an event's copy may be older), if it still exists. */
function current(store: Store, id: string): Annotation | undefined {
  try {
    return store.getAnnotation(id)
  } catch {
    return undefined // deleted or archived since
  }
}

/** The agent acknowledged it, replied to it or resolved it: a person's reply there is news for the agent. */
function touchedByAgent(a: Annotation): boolean {
  return a.status === 'acknowledged' || a.status === 'resolved' || a.replies.some((r) => r.author === 'agent')
}

function clip(text: string, max = QUOTE_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

function whereOf(a: Annotation): string {
  const file = a.source?.file
  const at = file ? `${file}${a.source?.line !== undefined ? `:${a.source.line}` : ''}` : undefined
  const component = a.source?.component
  return [at, component ? `<${component}>` : undefined, a.url ? `on ${a.url}` : undefined].filter(Boolean).join(' ')
}

/** A new annotation, as facts the agent can act on: id, what kind, the comment, where. */
function annotationContent(a: Annotation): string {
  const kind = [a.intent, a.severity].filter(Boolean).join(', ')
  const where = whereOf(a)
  return `New annotation ${a.id}${kind ? ` (${kind})` : ''} from the person: "${clip(a.comment)}"${where ? ` at ${where}` : ''}. Pending; acknowledge it to take it.`
}

/** A person's reply on an annotation the agent works on. */
function replyContent(a: Annotation, reply: Reply): string {
  const where = whereOf(a)
  return `The person replied on annotation ${a.id} (${a.status}${where ? `, ${where}` : ''}): "${clip(reply.message)}"`
}

/** Meta keys are `[A-Za-z0-9_]` and values strings (Claude Code's rule); absent facts are left out. */
function metaOf(a: Annotation): Record<string, string> {
  const meta: Record<string, string> = { annotation_id: a.id }
  if (a.source?.file) meta.file = a.source.file
  if (a.source?.line !== undefined) meta.line = String(a.source.line)
  if (a.url) meta.url = a.url
  return meta
}
