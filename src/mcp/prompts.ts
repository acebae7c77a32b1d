/**
 * The `work_loop` prompt: the agent's work loop (instructions.ts) as a message to start from,
 * with the current state of the store, for every session or one.
 */
import { completable, ProtocolError, ProtocolErrorCode, type GetPromptResult, type McpServer } from '@modelcontextprotocol/server'
import { afterCatchUp } from './resources.js'
import { z } from 'zod'
import { NotFoundError } from '../store/errors.js'
import type { Store } from '../store/store.js'
import { toToolError } from '../tools/result.js'
import { completeSessionIds } from './complete.js'
import { workLoopRules, workLoopSteps } from './instructions.js'

const WORK_LOOP_PROMPT = 'work_loop'

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
    ...workLoopRules(toolNames),
    'Keep replies short and concrete: they appear next to the element in the page.',
  ].join('\n')
  return {
    description: session ? `Marginalia work loop for session ${session.id}` : 'Marginalia work loop for every session',
    messages: [{ role: 'user', content: { type: 'text', text } }],
  }
}

/** Register the `work_loop` prompt on `mcp`, for a server that exposes `toolNames`. */
export function registerPrompts(mcp: McpServer, store: Store, toolNames: readonly string[]): void {
  mcp.registerPrompt(
    WORK_LOOP_PROMPT,
    {
      title: 'Marginalia work loop',
      description:
        'Start working through the annotations: watch for new ones, acknowledge one, fix the code, then resolve, reply ' +
        'or dismiss, and watch again. Give sessionId to work on one page only.',
      argsSchema: z.object({
        // Completable inside optional: the SDK unwraps the optional to find the completer.
        sessionId: completable(z.string().min(1), (value) => completeSessionIds(store, value)).optional().describe('Only this session (default: every session)'),
      }),
    },
    ({ sessionId }) =>
      afterCatchUp(store, () => {
        try {
          return renderWorkLoop(store, toolNames, sessionId)
        } catch (e) {
          if (e instanceof NotFoundError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `sessionId: ${toToolError(e).message}`)
          throw e
        }
      }),
  )
}
