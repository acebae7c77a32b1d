/** The eight query and command tools: one registration each, schema beside handler. */
import { z } from 'zod'
import { Annotation, Id, LIMITS, Session } from '../store/model.js'
import { defineTool } from './define.js'

const message = (what: string, max: number = LIMITS.message) =>
  z.string().min(1).max(max).refine((s) => s.trim().length > 0, { message: 'must not be empty or only whitespace' }).describe(what)

const AnnotationOut = z.object({ annotation: Annotation })
const ListOut = z.object({ annotations: z.array(Annotation), count: z.number().int() })

export const listSessions = defineTool({
  name: 'list_sessions',
  title: 'List sessions',
  description:
    'List every annotation session (one per page a person is annotating), oldest first. Use it to find a session id; ' +
    'to find work, get_all_pending or watch_annotations is usually better.',
  input: z.strictObject({}),
  output: z.object({ sessions: z.array(Session), count: z.number().int() }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: (_args, { store }) => {
    const sessions = store.listSessions()
    return { sessions, count: sessions.length }
  },
})

export const getSession = defineTool({
  name: 'get_session',
  title: 'Get a session',
  description: 'Get one session with all of its annotations (any status, oldest first), including every reply.',
  input: z.strictObject({ id: Id.describe('Session id (from list_sessions or an annotation)') }),
  output: z.object({ session: Session.extend({ annotations: z.array(Annotation) }) }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ id }, { store }) => ({ session: store.getSession(id) }),
})

export const getPending = defineTool({
  name: 'get_pending',
  title: 'Get pending annotations of a session',
  description: 'Pending annotations of one session, oldest first: the work nobody has acknowledged yet on that page.',
  input: z.strictObject({ sessionId: Id.describe('Session id') }),
  output: ListOut.extend({ sessionId: z.string() }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ sessionId }, { store }) => {
    const annotations = store.getPending(sessionId)
    return { sessionId, annotations, count: annotations.length }
  },
})

export const getAllPending = defineTool({
  name: 'get_all_pending',
  title: 'Get all pending annotations',
  description:
    'Pending annotations of every session, oldest first. Each has a comment (what the person wants), the page url, ' +
    'the element (CSS selector, text, html) and optional intent/severity. Acknowledge one before working on it.',
  input: z.strictObject({}),
  output: ListOut,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: (_args, { store }) => {
    const annotations = store.getAllPending()
    return { annotations, count: annotations.length }
  },
})

export const acknowledge = defineTool({
  name: 'acknowledge',
  title: 'Acknowledge an annotation',
  description:
    'Take a pending annotation before working on it (pending → acknowledged), so the person sees it is being handled and ' +
    'no other agent takes it. Fails if it is not pending (already taken, resolved or dismissed): then pick another one. ' +
    'An optional message is shown to the person as your reply.',
  input: z.strictObject({
    id: Id.describe('Annotation id'),
    message: message('Optional note to the person, e.g. what you are about to do').optional(),
  }),
  output: AnnotationOut,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, message: note }, { store }) => ({ annotation: await store.acknowledge(id, { message: note }) }),
})

export const resolve = defineTool({
  name: 'resolve',
  title: 'Resolve an annotation',
  description:
    'Mark an annotation as done (any status → resolved) after you changed the code. Give a short summary of what you ' +
    'changed: it is shown to the person, who can reopen it if it is not right.',
  input: z.strictObject({
    id: Id.describe('Annotation id'),
    summary: message('What you changed, in a sentence or two').optional(),
  }),
  output: AnnotationOut,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, summary }, { store }) => ({ annotation: await store.resolve(id, { summary }) }),
})

export const dismiss = defineTool({
  name: 'dismiss',
  title: 'Dismiss an annotation',
  description:
    'Decline an annotation (any status → dismissed): it will not be done, e.g. it is intended behaviour or out of scope. ' +
    'A reason is required and is shown to the person.',
  input: z.strictObject({
    id: Id.describe('Annotation id'),
    reason: message('Why it will not be done'),
  }),
  output: AnnotationOut,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, reason }, { store }) => ({ annotation: await store.dismiss(id, { reason }) }),
})

export const reply = defineTool({
  name: 'reply',
  title: 'Reply to an annotation',
  description:
    'Add a reply to an annotation thread without changing its status: ask a clarifying question, report progress, ' +
    'or explain a decision. The person sees it live in the page.',
  input: z.strictObject({
    id: Id.describe('Annotation id'),
    message: message('Your reply'),
  }),
  output: AnnotationOut,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, message: text }, { store }) => ({ annotation: await store.reply(id, { author: 'agent', message: text }) }),
})
