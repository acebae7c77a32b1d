/**
 * The inbox app's own tools (`inbox_reply`, `inbox_set_status`): what the inbox rendered as an MCP
 * App in the agent's host calls to write. Listed only to clients that render apps (src/mcp/app.ts).
 *
 * Who writes through them: the host calls them on the agent's own MCP connection, and any client
 * can announce that it renders apps, so the server cannot tell the person clicking in the app from
 * the agent calling the tool itself. Everything they write is therefore the agent's
 * (`author: 'agent'`), marked as coming through the host (`via: 'host'`): shown so in the inbox
 * and the overlay, and never the person's answer to a question (`ask`, `await_reply`). Each status
 * change carries a note, so the thread says that it came through the host.
 *
 * The tool policy binds them like the agent's own tools: by name (`--deny inbox_reply`), and by the
 * tools whose power a call exercises (`powersOf`): `inbox_set_status {action: "resolve"}` resolves,
 * so a policy without `resolve` refuses it.
 */
import { z } from 'zod'
import { Id, ReplyInput } from '../store/model.js'
import { toSummary } from '../views/summary.js'
import { defineTool, type ToolDefinition } from './define.js'
import { described } from './inputs.js'

/** The notes a status change through the host carries when the app sent none. */
const NOTES = {
  reopen: 'Reopened through the inbox app in the agent’s host.',
  resolve: 'Resolved through the inbox app in the agent’s host.',
  dismiss: 'Dismissed through the inbox app in the agent’s host.',
} as const

const AppAnnotationOut = z.object({ annotation: z.object({ id: z.string(), status: z.string() }).loose(), rev: z.number().int() })

const inboxReply = defineTool({
  name: 'inbox_reply',
  title: 'Reply from the inbox app',
  description: "The inbox app's reply on an annotation's thread, recorded as through the agent's host (not the person's answer to a question).",
  input: z.strictObject({ id: Id.describe('Annotation id'), message: described(ReplyInput.shape.message, 'The reply') }),
  output: AppAnnotationOut,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  handler: async ({ id, message }, ctx) => {
    const annotation = await ctx.store.reply(id, { author: 'agent', via: 'host', message })
    return { annotation: toSummary(annotation), rev: ctx.store.rev }
  },
  render: (r) => `Reply posted on ${r.annotation.id} through the host (now ${r.annotation.status}, rev ${r.rev}).`,
})

const inboxStatus = defineTool({
  name: 'inbox_set_status',
  title: 'Change a status from the inbox app',
  description: "The inbox app's status change: reopen, resolve or dismiss an annotation, with a note recorded as through the agent's host.",
  input: z.strictObject({
    id: Id.describe('Annotation id'),
    action: z.enum(['reopen', 'resolve', 'dismiss']),
    message: described(ReplyInput.shape.message, 'A note to go with it').optional(),
  }),
  output: AppAnnotationOut,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  handler: async ({ id, action, message }, ctx) => {
    const { store } = ctx
    const text = message ?? NOTES[action]
    const annotation =
      action === 'reopen'
        ? await store.reopen(id, { message: text }, { via: 'host' })
        : action === 'resolve'
          ? await store.resolve(id, { summary: text }, 'agent', { via: 'host' })
          : await store.dismiss(id, { reason: text }, 'agent', { via: 'host' })
    return { annotation: toSummary(annotation), rev: store.rev }
  },
  render: (r) => `${r.annotation.id} is now ${r.annotation.status} (rev ${r.rev}).`,
})

/** The app's tools, in listing order. */
export const APP_TOOLS: readonly ToolDefinition[] = [inboxReply, inboxStatus]
export const APP_TOOL_NAMES: readonly string[] = APP_TOOLS.map((t) => t.name)

/**
 * The agent tools whose power a call of an app tool exercises: the policy must expose each, or the
 * call is refused. Read from the raw arguments before validation: an action the schema refuses
 * asks for nothing here and is refused by the schema.
 */
export function powersOf(name: string, args: unknown): string[] {
  if (name === inboxReply.name) return ['reply']
  if (name !== inboxStatus.name) return []
  const action = typeof args === 'object' && args !== null ? (args as { action?: unknown }).action : undefined
  return action === 'resolve' || action === 'dismiss' ? ['reply', action] : ['reply']
}
