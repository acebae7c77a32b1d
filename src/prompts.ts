/**
 * The agent's work loop, written once: the server `instructions` and the `work_loop` prompt
 * both come from here, and both mention only the tools the server actually exposes.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { completable } from '@modelcontextprotocol/sdk/server/completable.js'
import { ErrorCode, McpError, type GetPromptResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { NotFoundError } from './store/errors.js'
import type { Store } from './store/store.js'
import type { ToolRegistry } from './tools/registry.js'

export const WORK_LOOP_PROMPT = 'work_loop'

/** The numbered steps of the loop, for the tools in `toolNames`; focused on one session when `sessionId` is given. */
export function workLoopSteps(toolNames: readonly string[], sessionId?: string): string[] {
  const has = (n: string) => toolNames.includes(n)
  const scope = sessionId === undefined ? '' : ` with sessionId "${sessionId}"`
  const steps = [
    has('watch_annotations') && `watch_annotations${scope} — wait for what the person pointed at (returns at once if work is pending).`,
    has('acknowledge') && 'acknowledge — take one annotation before you start, so nobody else does it twice.',
    `Fix the code: the comment says what is wrong; the selector and text locate it, url is the page${has('get_annotation') ? ' (get_annotation has the HTML and every reply)' : ''}.`,
    (has('resolve') || has('dismiss') || has('reply')) &&
      'resolve with a short summary of the change — or reply to ask a question, or dismiss with a reason if it will not be done.',
    has('watch_annotations') && 'watch_annotations again.',
  ].filter((s): s is string => typeof s === 'string')
  return steps.map((step, i) => `${i + 1}. ${step}`)
}

export function instructionsFor(toolNames: readonly string[]): string {
  return [
    'Marginalia: a person annotates a running web app; you receive each annotation, fix the code, and answer in the page.',
    'Work loop:',
    ...workLoopSteps(toolNames),
    toolNames.includes('ask') && 'When something is unclear, ask asks the person on the annotation and waits for the answer (await_reply keeps waiting later).',
    toolNames.includes('watch_changes') && 'To follow replies and reopens as well as new work, use get_changes / watch_changes with the rev you last saw.',
    'Annotations are listed oldest first. A person may reopen an annotation; it then comes back as pending.',
    `Tools: ${toolNames.join(', ')}.`,
  ]
    .filter((line): line is string => typeof line === 'string')
    .join('\n')
}

/** The prompt text; throws NotFoundError for an unknown session. */
export function renderWorkLoop(store: Store, toolNames: readonly string[], sessionId?: string): GetPromptResult {
  const session = sessionId === undefined ? undefined : store.getSession(sessionId)
  const focus = session
    ? [
        `Work on session "${session.id}" only: ${session.url}${session.name ? ` (${session.name})` : ''}, ` +
          `${store.countPending(session.id)} pending of ${session.annotations.length} annotation(s).`,
        toolNames.includes('get_pending') ? `get_pending with sessionId "${session.id}" lists what is waiting there.` : undefined,
      ]
    : [
        'Work on every session. ' +
          `There ${store.countPending() === 1 ? 'is 1 pending annotation' : `are ${store.countPending()} pending annotations`} right now.`,
      ]
  const text = [
    'You are working through the annotations a person left on a running web app with Marginalia.',
    ...focus.filter((line): line is string => line !== undefined),
    '',
    'Repeat this loop until the person stops you:',
    ...workLoopSteps(toolNames, session?.id),
    '',
    'Keep replies short and concrete: they appear next to the element in the page.',
    `Tools available: ${toolNames.join(', ')}.`,
  ].join('\n')
  return {
    description: session ? `Marginalia work loop for session ${session.id}` : 'Marginalia work loop for every session',
    messages: [{ role: 'user', content: { type: 'text', text } }],
  }
}

/** Session ids that start with `prefix` (or whose URL contains it), newest first, at most 100. */
export function completeSessionIds(store: Store, prefix: string | undefined): string[] {
  const needle = (prefix ?? '').toLowerCase()
  return store
    .listSessions()
    .filter((s) => s.id.toLowerCase().startsWith(needle) || s.url.toLowerCase().includes(needle))
    .reverse()
    .slice(0, 100)
    .map((s) => s.id)
}

/** Register the `work_loop` prompt on `mcp`. */
export function registerPrompts(mcp: McpServer, store: Store, registry: ToolRegistry): void {
  mcp.registerPrompt(
    WORK_LOOP_PROMPT,
    {
      title: 'Marginalia work loop',
      description:
        'Start working through the annotations: watch for new ones, acknowledge one, fix the code, then resolve, reply ' +
        'or dismiss, and watch again. Give sessionId to work on one page only.',
      argsSchema: {
        sessionId: completable(z.string().min(1).optional().describe('Only this session (default: every session)'), (value) => completeSessionIds(store, value)),
      },
    },
    ({ sessionId }) => {
      try {
        return renderWorkLoop(store, registry.names(), sessionId)
      } catch (e) {
        if (e instanceof NotFoundError) throw new McpError(ErrorCode.InvalidParams, `sessionId: ${e.message}`)
        throw e
      }
    },
  )
}
