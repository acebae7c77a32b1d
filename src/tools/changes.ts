/** Follow everything that happens, not only new work: the change cursor, and its long-poll form. */
import { z } from 'zod'
import { isIdentityEvent, isPermissionEvent, STORE_EVENT_TYPES, type StoreEvent } from '../store/events.js'
import { currentActor } from '../store/actor.js'
import { ValidationError } from '../store/errors.js'
import { AnnotationStatus, Id, Reply, Session } from '../store/model.js'
import type { Store } from '../store/store.js'
import { watchFor } from '../store/watch.js'
import { AnnotationSummary, toSummary } from '../views/summary.js'
import { defineTool, type ToolContext } from './define.js'
import { ClampedOut, clampedText, clampedWait, TimeoutParam, waitMs, waitWithProgress, type Clamped } from './wait.js'

const DEFAULT_CHANGES_LIMIT = 100
const MAX_CHANGES_LIMIT = 1_000

/** An event as a model sees it: created annotations as summaries, everything else as is. */
const EventView = z.object({
  rev: z.number().int(),
  at: z.string(),
  type: z.enum(STORE_EVENT_TYPES),
  sessionId: z.string(),
  annotationId: z.string().optional(),
  action: z.string().optional(),
  from: AnnotationStatus.optional(),
  to: AnnotationStatus.optional(),
  reply: Reply.optional(),
  annotation: AnnotationSummary.optional(),
  session: Session.optional(),
  archiveFile: z.string().optional(),
})
type EventView = z.infer<typeof EventView>

function viewOf(event: StoreEvent): EventView {
  if (event.type === 'annotation.created') {
    const { annotation, ...rest } = event
    return { ...rest, annotation: toSummary(annotation) }
  }
  return event
}

const changesOutput = {
  fromRev: z.number().int().describe('The sinceRev asked for').meta({ listed: false }),
  toRev: z.number().int().describe('Continue from here: pass it as sinceRev next time'),
  currentRev: z.number().int(),
  events: z.array(EventView),
  count: z.number().int().meta({ listed: false }),
  more: z.boolean().describe('More events follow toRev (the page was limited)'),
}

const SinceRev = z.number().int('must be a whole number').min(0, 'must be ≥ 0').describe('Store rev to continue from (0: the start)')
const Limit = z.number().int().min(1).max(MAX_CHANGES_LIMIT).describe(`Max events (default ${DEFAULT_CHANGES_LIMIT})`)

type ChangesPage = z.infer<z.ZodObject<typeof changesOutput>>

/** Events after `sinceRev`, limited by count and by the byte budget. */
/**
 * What the one calling may not see, read when the call starts, in the caller's context (a watch's
 * later probes run in the context of whoever wrote): the roster (identity and credential events)
 * unless an admin; the agents' permission requests and their answers when an agent (only a
 * person answers them, and an agent reads no prompt, its own or another's).
 */
function hiddenFor(store: Store): ((event: StoreEvent) => boolean) | undefined {
  const actor = currentActor()
  if (actor === undefined) return undefined
  const role = store.identities.get(actor.id)?.role
  if (role === 'admin') return undefined
  return role === 'agent' ? (event) => isIdentityEvent(event) || isPermissionEvent(event) : isIdentityEvent
}

function changesPage(store: Store, sinceRev: number, sessionId: string | undefined, limit: number, ctx: ToolContext, hidden: ((event: StoreEvent) => boolean) | undefined): ChangesPage {
  const currentRev = store.rev
  if (sinceRev > currentRev) throw new ValidationError([{ path: 'sinceRev', message: `must be at most the current rev ${currentRev}` }])
  const all = store.changesSince(sinceRev) // CURSOR_EXPIRED when older than the kept window
  const events: EventView[] = []
  let used = 2_000
  let toRev = sinceRev
  let more = false
  for (const event of all) {
    if ((sessionId !== undefined && event.sessionId !== sessionId) || hidden?.(event) === true) {
      toRev = event.rev
      continue
    }
    const view = viewOf(event)
    const cost = 2.4 * Buffer.byteLength(JSON.stringify(view))
    if (events.length >= limit || (events.length > 0 && used + cost > ctx.limits.byteBudget)) {
      more = true
      break
    }
    used += cost
    events.push(view)
    toRev = event.rev
  }
  if (!more) toRev = Math.max(toRev, all.at(-1)?.rev ?? sinceRev)
  return { fromRev: sinceRev, toRev, currentRev, events, count: events.length, more }
}

function renderChanges(r: ChangesPage & { status?: string; clamped?: Clamped }): string {
  if (r.status === 'timeout') return `No changes after rev ${r.fromRev} yet (timeout; current rev ${r.currentRev}).${clampedText(r.clamped)} Call again with sinceRev ${r.toRev}: nothing after it is missed.`
  const lines = [`Changes after rev ${r.fromRev}: ${r.count} event(s), up to rev ${r.toRev} (current ${r.currentRev}).`]
  for (const e of r.events) {
    const what =
      e.type === 'annotation.status_changed'
        ? `${e.annotationId} ${e.from} → ${e.to}`
        : e.type === 'annotation.created'
          ? `${e.annotationId} new: ${e.annotation?.comment.replace(/\s*\n\s*/g, ' ⏎ ')}`
          : e.type === 'session.created'
            ? `session ${e.sessionId} ${e.session?.url ?? ''}`
            : `${e.annotationId ?? e.sessionId}`
    const reply = e.reply ? ` | ${e.reply.author}${e.reply.kind === 'question' ? ' (question)' : ''}: "${e.reply.message.replace(/\s*\n\s*/g, ' ⏎ ')}"` : ''
    lines.push(`- rev ${e.rev} ${e.at} ${e.type} ${what}${reply}`)
  }
  if (r.more) lines.push(`More: call again with sinceRev ${r.toRev}.`)
  return lines.join('\n')
}

export const getChanges = defineTool({
  name: 'get_changes',
  description: 'Every change after a store rev (new annotations, replies, reopens, status changes). Continue with sinceRev = toRev.',
  input: z.strictObject({ sinceRev: SinceRev, sessionId: Id.optional().describe('Only this session'), limit: Limit.optional() }),
  output: z.object(changesOutput),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ sinceRev, sessionId, limit }, ctx) => changesPage(ctx.store, sinceRev, sessionId, limit ?? DEFAULT_CHANGES_LIMIT, ctx, hiddenFor(ctx.store)),
  render: renderChanges,
})

export const watchChanges = defineTool({
  name: 'watch_changes',
  description: 'Like get_changes, but waits for the next change.',
  input: z.strictObject({
    sinceRev: SinceRev,
    sessionId: Id.optional().describe('Only this session'),
    timeoutMs: TimeoutParam,
    limit: Limit.optional(),
  }),
  output: z.object({ status: z.enum(['changes', 'timeout']), ...changesOutput, clamped: ClampedOut }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  listening: { waitingFor: (a) => `Waiting for changes after rev ${String(a.sinceRev)}${typeof a.sessionId === 'string' ? ` in session ${a.sessionId}` : ''}` },
  handler: async ({ sinceRev, sessionId, timeoutMs, limit }, ctx) => {
    const { store } = ctx
    const max = limit ?? DEFAULT_CHANGES_LIMIT
    const hidden = hiddenFor(store)
    changesPage(store, sinceRev, sessionId, max, ctx, hidden) // validate sinceRev now (INVALID_PARAMS / CURSOR_EXPIRED)
    const probe = () => {
      const page = changesPage(store, sinceRev, sessionId, max, ctx, hidden)
      return page.count > 0 ? page : undefined
    }
    const outcome = await waitWithProgress(watchFor(store, probe, { timeoutMs: waitMs(timeoutMs, ctx) }), ctx, 'Waiting for changes')
    if (outcome.status === 'found') return { status: 'changes' as const, ...outcome.value }
    return { status: 'timeout' as const, fromRev: sinceRev, toRev: Math.max(sinceRev, store.rev), currentRev: store.rev, events: [], count: 0, more: false, ...clampedWait(timeoutMs, ctx) }
  },
  render: renderChanges,
})
