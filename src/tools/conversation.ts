/** Ask the person and wait for the answer. */
import { z } from 'zod'
import { ValidationError } from '../store/errors.js'
import { Id, Reply, ReplyInput, type Annotation, type Reply as ReplyT } from '../store/model.js'
import type { Store } from '../store/store.js'
import { watchFor } from '../store/watch.js'
import { defineTool, type ToolContext } from './define.js'
import { AnnotationId, described } from './inputs.js'
import { ClampedOut, clampedText, clampedWait, TimeoutParam, waitMs, waitWithProgress } from './wait.js'

const AnswerOut = z.object({
  status: z.enum(['answered', 'timeout']),
  annotationId: z.string().meta({ listed: false }), // the id asked with
  questionId: z.string().describe('Pass it to await_reply to keep waiting for this answer later'),
  question: z.string().optional(),
  answer: Reply.optional().describe('The first human reply after the question'),
  clamped: ClampedOut,
})
type AnswerOut = z.infer<typeof AnswerOut>

/**
 * The first reply by the person after the question with id `questionId`, if any. Only the person's
 * own reply answers: nothing an agent writes does, through its host's inbox app (`via`) or not.
 */
function answerTo(a: Annotation, questionId: string): ReplyT | undefined {
  const at = a.replies.findIndex((r) => r.id === questionId)
  if (at < 0) return undefined
  return a.replies.slice(at + 1).find((r) => r.author === 'human' && r.via === undefined)
}

async function waitForAnswer(store: Store, annotationId: string, questionId: string, timeoutMs: number | undefined, ctx: ToolContext): Promise<AnswerOut> {
  const question = store.getAnnotation(annotationId).replies.find((r) => r.id === questionId)
  const probe = () => answerTo(store.getAnnotation(annotationId), questionId) // NOT_FOUND if it is deleted meanwhile
  const outcome = await waitWithProgress(watchFor(store, probe, { timeoutMs: waitMs(timeoutMs, ctx) }), ctx, 'Waiting for the person to answer')
  const base = { annotationId, questionId, ...(question ? { question: question.message } : {}) }
  return outcome.status === 'found' ? { status: 'answered', ...base, answer: outcome.value } : { status: 'timeout', ...base, ...clampedWait(timeoutMs, ctx) }
}

function render(r: AnswerOut): string {
  return r.status === 'answered'
    ? `The person answered on ${r.annotationId}: "${r.answer?.message ?? ''}"`
    : `No answer yet on ${r.annotationId} (timeout).${clampedText(r.clamped)} Call await_reply with questionId "${r.questionId}" to keep waiting; an answer that arrives meanwhile is kept.`
}

const Timeout = TimeoutParam

const awaitingAnswer = (a: Readonly<Record<string, unknown>>): string => `Waiting for the person to answer question ${String(a.questionId)} on ${String(a.id)}`

export const ask = defineTool({
  name: 'ask',
  description: 'Ask the person a question on an annotation and wait for the answer. After a timeout, call await_reply; never ask twice.',
  input: z.strictObject({
    id: AnnotationId,
    question: described(ReplyInput.shape.message, 'Your question'),
    timeoutMs: Timeout,
    point: z.boolean().optional().describe('The person answers by clicking an element'),
  }),
  output: AnswerOut,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  // Asked once; its task then awaits the answer to the question it asked.
  listening: { polls: 'await_reply', fixed: (_args, first) => ({ id: first.annotationId, questionId: first.questionId }), waitingFor: awaitingAnswer },
  handler: async ({ id, question, timeoutMs, point }, ctx) => {
    const updated = await ctx.store.reply(id, { author: 'agent', message: question, kind: 'question', ...(point ? { point: true as const } : {}) })
    const asked = updated.replies.findLast((r) => r.kind === 'question' && r.message === question)!
    return waitForAnswer(ctx.store, id, asked.id, timeoutMs, ctx)
  },
  render,
})

export const awaitReply = defineTool({
  name: 'await_reply',
  description: 'Keep waiting for the answer to a question from ask (one given meanwhile returns at once).',
  input: z.strictObject({
    id: AnnotationId,
    questionId: Id.optional().describe('From ask (default: the latest)'),
    timeoutMs: Timeout,
  }),
  output: AnswerOut,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  // Its task awaits the question it found first ("the latest" stays the one it started with).
  listening: { fixed: (_args, first) => ({ id: first.annotationId, questionId: first.questionId }), waitingFor: awaitingAnswer },
  handler: async ({ id, questionId, timeoutMs }, ctx) => {
    const annotation = ctx.store.getAnnotation(id)
    const question = questionId === undefined ? annotation.replies.findLast((r) => r.kind === 'question') : annotation.replies.find((r) => r.id === questionId)
    if (!question) {
      throw new ValidationError([
        { path: 'questionId', message: questionId === undefined ? `no question was asked on annotation ${id}; use ask` : `${questionId} is not a reply on annotation ${id}` },
      ])
    }
    return waitForAnswer(ctx.store, id, question.id, timeoutMs, ctx)
  },
  render,
})
