/** The query and command tools on sessions and annotations: one registration each, schema beside handler. */
import { z } from 'zod'
import { AcknowledgeInput, Annotation, AnnotationStatus, DismissInput, Id, ReplyInput, ResolveInput, Session, type Annotation as AnnotationT } from '../store/model.js'
import { fitAnnotation, pageOutput } from '../views/page.js'
import { defineTool, type ToolContext } from './define.js'
import { AnnotationId, commandInput, EXPECTED_REV } from './inputs.js'
import { detailOf, listPage, pageHeader, pagingInput, renderPage } from './paging.js'

const AnnotationOut = z.object({
  annotation: Annotation,
  omittedReplies: z.number().int().optional().describe('Older replies left out to stay under the response size budget'),
})

/** A command's result: the annotation as it is now (trimmed to the byte budget if it must be). */
function annotationResult(a: AnnotationT, ctx: ToolContext): z.input<typeof AnnotationOut> {
  return fitAnnotation(a, ctx.limits.byteBudget)
}

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
  description:
    'Get one session and its annotations of any status, oldest first, as summaries (comment, element, status, ' +
    'reply count and latest reply). Pages of `limit` (default 100) with `nextCursor`; detail:"full" for whole records.',
  input: z.strictObject({ id: Id.describe('Session id (from list_sessions or an annotation)'), status: AnnotationStatus.optional().describe('Only annotations with this status'), ...pagingInput }),
  output: z.object({ session: Session, ...pageOutput }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ id, status, ...args }, ctx) => {
    const session = ctx.store.getSession(id)
    const { annotations: _all, ...fields } = session
    return { session: fields, ...listPage(ctx.store, { sessionId: id, status }, args, ctx) }
  },
  render: (r) => renderPage(r, `Session ${r.session.id} · ${r.session.url}${r.session.name ? ` (${r.session.name})` : ''}. ${pageHeader('annotations', r)}`, detailOf(r)),
})

export const getPending = defineTool({
  name: 'get_pending',
  title: 'Get pending annotations of a session',
  description:
    'Pending annotations of one session, oldest first: the work nobody has acknowledged yet on that page. Summaries by ' +
    'default (get_annotation for a whole record); pages of `limit` (default 100) with `nextCursor` when more exist.',
  input: z.strictObject({ sessionId: Id.describe('Session id'), ...pagingInput }),
  output: z.object({ sessionId: z.string(), ...pageOutput }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ sessionId, ...args }, ctx) => ({ sessionId, ...listPage(ctx.store, { sessionId, status: 'pending' }, args, ctx) }),
  render: (r) => renderPage(r, `${pageHeader(`pending annotations in session ${r.sessionId}`, r)}`, detailOf(r)),
})

export const getAllPending = defineTool({
  name: 'get_all_pending',
  title: 'Get all pending annotations',
  description:
    'Pending annotations of every session, oldest first. Each summary has the comment (what the person wants), the page ' +
    'url, the element (CSS selector and text), intent/severity and the latest reply; get_annotation gives the whole record ' +
    '(HTML, position, every reply). Pages of `limit` (default 100) with `nextCursor` and `total`. Acknowledge one before working on it.',
  input: z.strictObject({ ...pagingInput }),
  output: z.object({ ...pageOutput }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: (args, ctx) => listPage(ctx.store, { status: 'pending' }, args, ctx),
  render: (r) => renderPage(r, pageHeader('pending annotations', r), detailOf(r)),
})

export const getAnnotation = defineTool({
  name: 'get_annotation',
  title: 'Get one annotation in full',
  description:
    'The whole record of one annotation: comment, element (selector, DOM path, tag, text, trimmed HTML, position), ' +
    'selected text, viewport, source location and every reply. Use it when a summary is not enough to locate or fix the issue.',
  input: z.strictObject({ id: AnnotationId }),
  output: AnnotationOut,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ id }, ctx) => annotationResult(ctx.store.getAnnotation(id), ctx),
})

export const acknowledge = defineTool({
  name: 'acknowledge',
  title: 'Acknowledge an annotation',
  description:
    'Take a pending annotation before working on it (pending → acknowledged), so the person sees it is being handled and ' +
    'no other agent takes it. Fails if it is not pending (already taken, resolved or dismissed): then pick another one. ' +
    'An optional message is shown to the person as your reply.',
  input: commandInput(AcknowledgeInput, { message: 'Optional note to the person, e.g. what you are about to do', expectedRev: EXPECTED_REV }),
  output: AnnotationOut,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, ...input }, ctx) => annotationResult(await ctx.store.acknowledge(id, input), ctx),
})

export const resolve = defineTool({
  name: 'resolve',
  title: 'Resolve an annotation',
  description:
    'Mark an annotation as done (any status → resolved) after you changed the code. Give a short summary of what you ' +
    'changed: it is shown to the person, who can reopen it if it is not right.',
  input: commandInput(ResolveInput, { summary: 'What you changed, in a sentence or two', expectedRev: EXPECTED_REV }),
  output: AnnotationOut,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, ...input }, ctx) => annotationResult(await ctx.store.resolve(id, input), ctx),
})

export const dismiss = defineTool({
  name: 'dismiss',
  title: 'Dismiss an annotation',
  description:
    'Decline an annotation (any status → dismissed): it will not be done, e.g. it is intended behaviour or out of scope. ' +
    'A reason is required and is shown to the person.',
  input: commandInput(DismissInput, { reason: 'Why it will not be done', expectedRev: EXPECTED_REV }),
  output: AnnotationOut,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, ...input }, ctx) => annotationResult(await ctx.store.dismiss(id, input), ctx),
})

export const reply = defineTool({
  name: 'reply',
  title: 'Reply to an annotation',
  description:
    'Add a reply to an annotation thread without changing its status: ask a clarifying question, report progress, ' +
    'or explain a decision. The person sees it live in the page.',
  // The author is always the agent, and questions go through `ask`.
  input: commandInput(ReplyInput.pick({ message: true, expectedRev: true }), { message: 'Your reply', expectedRev: EXPECTED_REV }),
  output: AnnotationOut,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, ...input }, ctx) => annotationResult(await ctx.store.reply(id, { ...input, author: 'agent' }), ctx),
})
