/** The query and command tools on sessions and annotations: one registration each, schema beside handler. */
import { z } from 'zod'
import { AcknowledgeInput, Annotation, AnnotationStatus, DismissInput, Id, ReplyInput, ResolveInput, Session, type Annotation as AnnotationT } from '../store/model.js'
import { sourceSnippet } from '../sources/snippet.js'
import { stepLines } from '../store/steps.js'
import { fitAnnotation, pageOutput } from '../views/page.js'
import type { ContentBlock } from '@modelcontextprotocol/server'
import type { Store } from '../store/store.js'
import { defineTool, type ToolContext } from './define.js'
import { AnnotationId, commandInput, EXPECTED_REV } from './inputs.js'
import { detailOf, listPage, pageHeader, pagingInput, renderPage, RevOut } from './paging.js'

const AnnotationOut = z.object({
  annotation: Annotation,
  rev: RevOut,
  omittedReplies: z.number().int().optional().describe('Older replies left out to stay under the response size budget').meta({ listed: false }),
})

/** get_annotation's answer: the record, and the source lines around it (only it reads them: a mutation's answer never has them). */
const AnnotationWithSourceOut = AnnotationOut.extend({
  sourceLines: z.string().optional().describe('A few numbered lines of annotation.source.file around its line (">" marks it), read from the project root'),
  sourceLinesWithheld: z.string().optional().describe('Why sourceLines are absent although the file is in the project root (a dot-file or dot-folder, node_modules, a file git ignores)').meta({ listed: false }),
  steps: z.string().optional().describe('What the person did before, numbered'),
})

/** A command's result: the annotation as it is now (trimmed to the byte budget if it must be). */
function annotationResult(a: AnnotationT, ctx: ToolContext): z.input<typeof AnnotationOut> {
  return { ...fitAnnotation(a, ctx.limits.byteBudget), rev: ctx.store.rev }
}

/** What comes next after each command, in the one line a mutation answers with. */
const NEXT: Readonly<Record<string, string>> = {
  acknowledged: 'the person sees it. Next: fix it, then resolve (or reply, or dismiss).',
  replied: 'the person sees your reply. To ask and wait for an answer, use ask.',
  resolved: 'the person sees your summary and may reopen it. Next: watch_annotations.',
  dismissed: 'the person sees your reason. Next: watch_annotations.',
}

/**
 * A mutation's text: one line with what changed, the new status and rev, and the next step. The
 * whole record stays in the structured content for clients that read it.
 */
function mutationLine(done: keyof typeof NEXT & string): (r: z.output<typeof AnnotationOut>) => string {
  return (r) => `${r.annotation.id} ${done} (status ${r.annotation.status}, rev ${r.annotation.rev}); ${NEXT[done]}`
}

export const listSessions = defineTool({
  name: 'list_sessions',
  showsInApp: true,
  description: 'Annotation sessions, one per annotated page. For work, use get_all_pending or watch_annotations.',
  input: z.strictObject({}),
  output: z.object({ sessions: z.array(Session), count: z.number().int().meta({ listed: false }) }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: (_args, { store }) => {
    const sessions = store.listSessions()
    return { sessions, count: sessions.length }
  },
})

export const getSession = defineTool({
  name: 'get_session',
  showsInApp: true,
  description: 'One session and its annotations of any status, as summaries.',
  input: z.strictObject({ id: Id.describe('Session id'), status: AnnotationStatus.optional().describe('Only annotations with this status'), ...pagingInput }),
  output: z.object({ session: Session, ...pageOutput, rev: RevOut }),
  aliases: { sessionId: 'id' },
  sessionKeys: ['id'],
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
  showsInApp: true,
  description: 'Pending annotations of one session, oldest first, as summaries.',
  input: z.strictObject({ sessionId: Id.describe('Session id'), ...pagingInput }),
  output: z.object({ sessionId: z.string().meta({ listed: false }), ...pageOutput, rev: RevOut }), // the session asked for
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ sessionId, ...args }, ctx) => ({ sessionId, ...listPage(ctx.store, { sessionId, status: 'pending' }, args, ctx) }),
  render: (r) => renderPage(r, `${pageHeader(`pending annotations in session ${r.sessionId}`, r)}`, detailOf(r)),
})

export const getAllPending = defineTool({
  name: 'get_all_pending',
  showsInApp: true,
  description: 'Pending annotations of every session, oldest first, as summaries.',
  input: z.strictObject({ ...pagingInput }),
  output: z.object({ ...pageOutput, rev: RevOut }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: (args, ctx) => listPage(ctx.store, { status: 'pending' }, args, ctx),
  render: (r) => renderPage(r, pageHeader('pending annotations', r), detailOf(r)),
})

/** What each picture is, said before it: the element when annotated, once fixed, or an image the person added. */
const IMAGE_LABEL = { screenshot: 'before: the element when it was annotated', after: 'after: the element when it was resolved', image: 'an image the person added' } as const

/** The annotation's images (its own, then its replies'), each labelled, as MCP image content; a blob gone missing is left out. */
async function imageContent(store: Store, a: AnnotationT): Promise<ContentBlock[]> {
  const out: ContentBlock[] = []
  for (const att of [...(a.attachments ?? []), ...a.replies.flatMap((r) => r.attachments ?? [])]) {
    const blob = await store.blobs.get(att.sha256)
    if (blob) out.push({ type: 'text', text: IMAGE_LABEL[att.kind] }, { type: 'image', data: Buffer.from(blob.bytes).toString('base64'), mimeType: blob.mime })
  }
  return out
}

export const getAnnotation = defineTool({
  name: 'get_annotation',
  showsInApp: true,
  description: 'The whole record of an annotation: HTML, position, source location, attachments, every reply.',
  input: z.strictObject({ id: AnnotationId, images: z.boolean().optional().describe('Screenshots and images as image content (default true)') }),
  output: AnnotationWithSourceOut,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ id }, ctx) => {
    const { steps, ...a } = ctx.store.getAnnotation(id)
    const snippet = sourceSnippet(a.source, ctx.sources?.root)
    // The steps as lines the person would say (the record's structured steps are for the replay: `marginalia repro ID`).
    const said = steps?.length ? { steps: `${stepLines(steps).join('\n')}\n(replay: marginalia repro ${id})` } : {}
    return { ...annotationResult(a, ctx), ...said, ...(snippet?.lines !== undefined ? { sourceLines: snippet.lines } : {}), ...(snippet?.withheld !== undefined ? { sourceLinesWithheld: snippet.withheld } : {}) }
  },
  content: async (result, ctx, args) => [{ type: 'text', text: JSON.stringify(result) }, ...(args.images === false ? [] : await imageContent(ctx.store, ctx.store.getAnnotation(args.id)))],
})

export const acknowledge = defineTool({
  name: 'acknowledge',
  description: 'Take a pending annotation before working on it: the person sees it, no other agent takes it.',
  input: commandInput(AcknowledgeInput, { message: 'Note to the person', expectedRev: EXPECTED_REV }),
  output: AnnotationOut,
  listOutput: false, // the answer is its line; structuredContent keeps the record
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, ...input }, ctx) => annotationResult(await ctx.store.acknowledge(id, input), ctx),
  render: mutationLine('acknowledged'),
})

export const resolve = defineTool({
  name: 'resolve',
  description: 'Mark an annotation done once the code is changed; the person sees the summary and may reopen it.',
  input: commandInput(ResolveInput, { summary: 'What you changed', expectedRev: EXPECTED_REV }).extend({
    after: z.boolean().optional().describe('Add the browser\'s "after" picture (default true)'),
  }),
  output: AnnotationOut,
  listOutput: false, // the answer is its line; structuredContent keeps the record
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, after, ...input }, ctx) => annotationResult(await ctx.store.resolve(id, input, 'agent', { after: after !== false }), ctx),
  render: mutationLine('resolved'),
})

export const dismiss = defineTool({
  name: 'dismiss',
  description: 'Decline an annotation that will not be done; the person sees the reason.',
  input: commandInput(DismissInput, { reason: 'Why it will not be done', expectedRev: EXPECTED_REV }),
  output: AnnotationOut,
  listOutput: false, // the answer is its line; structuredContent keeps the record
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, ...input }, ctx) => annotationResult(await ctx.store.dismiss(id, input), ctx),
  render: mutationLine('dismissed'),
})

export const reply = defineTool({
  name: 'reply',
  description: 'Post on the thread without changing the status. To ask and wait for the answer, use ask.',
  input: commandInput(ReplyInput.pick({ message: true, expectedRev: true }), { message: 'Your reply', expectedRev: EXPECTED_REV }),
  output: AnnotationOut,
  listOutput: false, // the answer is its line; structuredContent keeps the record
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ id, ...input }, ctx) => annotationResult(await ctx.store.reply(id, { ...input, author: 'agent' }), ctx),
  render: mutationLine('replied'),
})
