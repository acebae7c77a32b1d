/**
 * What a store event is as a webhook: its type and its `data`. The record is the annotation as
 * the REST API returns it (`GET /api/annotations/:id`) when the message is made, with the event's
 * own part beside it (the reply, the status change, the pictures). Identity, credential, session,
 * capture and archive events are not sent: nothing of them leaves the store this way.
 */
import type { Annotation, Attachment, Reply } from '../store/model.js'
import type { StoreEvent } from '../store/events.js'

/** Every type a webhook can carry, in the order the docs list them. */
export const WEBHOOK_EVENT_TYPES = [
  'annotation.created',
  'annotation.acknowledged',
  'annotation.replied',
  'annotation.resolved',
  'annotation.dismissed',
  'annotation.reopened',
  'annotation.deleted',
  'question.asked',
  'question.answered',
] as const
type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** The test message `webhooks test` sends; not one an endpoint subscribes to. */
export const TEST_EVENT_TYPE = 'webhook.test'

export interface WebhookMessage {
  type: WebhookEventType
  /** The store rev of the change (the message's webhook-id is made of it). */
  rev: number
  /** When the change happened (ISO-8601 UTC). */
  timestamp: string
  data: Record<string, unknown>
}

export interface PayloadContext {
  /** The annotation now, or undefined when it is gone. */
  annotation(id: string): Annotation | undefined
  /** The URL an attachment is served at. */
  attachmentUrl(sha256: string): string
  /** The annotation's replies before this one (from the annotation, or from the store's recent events once it is gone). */
  repliesBefore(annotationId: string, replyId: string, rev: number): readonly Reply[]
}

const STATUS_TYPES = { acknowledge: 'annotation.acknowledged', resolve: 'annotation.resolved', dismiss: 'annotation.dismissed', reopen: 'annotation.reopened' } as const

/** The webhook a store event makes, or undefined for an event that is not sent. */
export function messageOf(event: StoreEvent, ctx: PayloadContext): WebhookMessage | undefined {
  const base = { rev: event.rev, timestamp: event.at }
  switch (event.type) {
    case 'annotation.created':
      return { ...base, type: 'annotation.created', data: { annotation: ctx.annotation(event.annotationId) ?? event.annotation } }
    case 'annotation.status_changed': {
      const annotation = ctx.annotation(event.annotationId)
      const data: Record<string, unknown> = { annotation: annotation ?? { id: event.annotationId, sessionId: event.sessionId }, from: event.from, to: event.to }
      if (event.reply) data.reply = replyNow(annotation, event.reply)
      if (event.action === 'resolve') {
        const pictures = picturesOf(annotation, data.reply as Reply | undefined, ctx)
        if (pictures) data.pictures = pictures
      }
      return { ...base, type: STATUS_TYPES[event.action], data }
    }
    case 'annotation.replied': {
      const annotation = ctx.annotation(event.annotationId)
      const type = questionType(event.reply, ctx.repliesBefore(event.annotationId, event.reply.id, event.rev)) ?? 'annotation.replied'
      return { ...base, type, data: { annotation: annotation ?? { id: event.annotationId, sessionId: event.sessionId }, reply: event.reply } }
    }
    case 'annotation.deleted':
      return { ...base, type: 'annotation.deleted', data: { annotation: { id: event.annotationId, sessionId: event.sessionId }, from: event.from } }
    case 'session.created':
    case 'annotation.archived':
    case 'identity.added':
    case 'identity.revoked':
    case 'credential.issued':
    case 'credential.ended':
    case 'capture.requested':
    case 'capture.taken':
      return undefined
  }
}

/** The reply as it is now (a browser may have added the "after" picture since). */
function replyNow(annotation: Annotation | undefined, reply: Reply): Reply {
  return annotation?.replies.find((r) => r.id === reply.id) ?? reply
}

/** An agent's question is question.asked; a person's reply right after an agent question is question.answered. */
function questionType(reply: Reply, before_: readonly Reply[]): WebhookEventType | undefined {
  if (reply.author === 'agent') return reply.kind === 'question' ? 'question.asked' : undefined
  for (let i = before_.length - 1; i >= 0; i--) {
    const before = before_[i]!
    if (before.author === 'human') return undefined
    if (before.kind === 'question') return 'question.answered'
  }
  return undefined
}

function pictureOf(attachments: readonly Attachment[] | undefined, kind: Attachment['kind']): Attachment | undefined {
  return attachments?.find((a) => a.kind === kind) ?? attachments?.find((a) => a.kind === 'screenshot')
}

/** The element's picture when it was annotated and after it was resolved, as URLs, where present. */
function picturesOf(annotation: Annotation | undefined, reply: Reply | undefined, ctx: PayloadContext): { before?: string; after?: string } | undefined {
  const before = pictureOf(annotation?.attachments, 'screenshot')
  const after = pictureOf(reply?.attachments, 'after')
  if (!before && !after) return undefined
  return { ...(before ? { before: ctx.attachmentUrl(before.sha256) } : {}), ...(after ? { after: ctx.attachmentUrl(after.sha256) } : {}) }
}

/** The JSON body of a message (Standard Webhooks: `{ type, timestamp, data }`). */
export function bodyOf(message: { type: string; timestamp: string; data: unknown }): string {
  return JSON.stringify({ type: message.type, timestamp: message.timestamp, data: message.data })
}

/** The webhook-id of a change for an endpoint: the same on every retry and after a restart. */
export function messageId(endpointId: string, rev: number): string {
  return `msg_${endpointId}_${rev}`
}
