/**
 * The agents whose hooks `marginalia hook AGENT EVENT` answers: which events each has, where its
 * hook input (stdin JSON) names the session and the working directory, and the answer each
 * expects on stdout. Two kinds of event:
 *
 * - `stop`: the agent is about to stop. Answering keeps it working on what the person left:
 *   Claude Code and Codex `{"decision":"block","reason"}`, Cursor `{"followup_message"}` (sent as
 *   the next user message), Gemini CLI `{"decision":"deny","reason"}` (sent as a new prompt).
 * - `context`: a turn or a session starts. The answer adds facts to what the model reads:
 *   `hookSpecificOutput.additionalContext` (Claude Code, Codex, Gemini CLI), `additional_context`
 *   (Cursor's sessionStart).
 */
import type { PushItem } from './item.js'

type HookKind = 'stop' | 'context'

export interface HookAgent {
  /** The agent's name in prose. */
  title: string
  /** Event name (as the agent spells it) → kind. */
  events: Readonly<Record<string, HookKind>>
  /** The session this input belongs to (undefined: the agent did not say). */
  session(input: HookInput): string | undefined
  /** The working directory of that session (undefined: the hook's own). */
  cwd(input: HookInput): string | undefined
  /** The answer to print for `items` (never empty). */
  answer(event: string, kind: HookKind, items: readonly PushItem[]): Record<string, unknown>
  /** Another agent running this agent's hook (Cursor runs Claude Code's): it answers nothing, that agent has its own. */
  foreign?(input: HookInput): boolean
}

export type HookInput = Record<string, unknown>

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined)

const claudeLike = (title: string, events: Record<string, HookKind>): HookAgent => ({
  title,
  events,
  session: (i) => text(i.session_id),
  cwd: (i) => text(i.cwd),
  answer: (event, kind, items) => (kind === 'stop' ? { decision: 'block', reason: stopText(items) } : { hookSpecificOutput: { hookEventName: event, additionalContext: contextText(items) } }),
})

export const HOOK_AGENTS: Readonly<Record<string, HookAgent>> = {
  claude: {
    ...claudeLike('Claude Code', { Stop: 'stop', SubagentStop: 'stop', UserPromptSubmit: 'context', SessionStart: 'context' }),
    // Cursor also runs the hooks of .claude/settings.json; its own (.cursor/hooks.json) tell it.
    foreign: (i) => typeof i.cursor_version === 'string' || (text(i.conversation_id) !== undefined && text(i.session_id) === undefined),
  },
  cursor: {
    title: 'Cursor',
    events: { stop: 'stop', sessionStart: 'context' },
    session: (i) => text(i.conversation_id) ?? text(i.session_id),
    cwd: (i) => (Array.isArray(i.workspace_roots) ? text(i.workspace_roots[0]) : undefined) ?? text(i.cwd),
    answer: (_event, kind, items) => (kind === 'stop' ? { followup_message: stopText(items) } : { additional_context: contextText(items) }),
  },
  codex: claudeLike('Codex', { Stop: 'stop', UserPromptSubmit: 'context', SessionStart: 'context' }),
  gemini: {
    title: 'Gemini CLI',
    events: { AfterAgent: 'stop', BeforeAgent: 'context', SessionStart: 'context' },
    session: (i) => text(i.session_id),
    cwd: (i) => text(i.cwd),
    answer: (event, kind, items) => (kind === 'stop' ? { decision: 'deny', reason: stopText(items) } : { hookSpecificOutput: { hookEventName: event, additionalContext: contextText(items) } }),
  },
}

/** At most this many annotations are spelled out in one answer; the rest are counted. */
const SHOWN = 5

function listed(items: readonly PushItem[], line: (i: PushItem) => string): string {
  const shown = items.slice(0, SHOWN).map((i) => `- ${line(i)}`)
  if (items.length > SHOWN) shown.push(`- and ${items.length - SHOWN} more: marginalia list`)
  return shown.join('\n')
}

/** What keeps a stopping agent working: the new annotations, each as an instruction. */
function stopText(items: readonly PushItem[]): string {
  const n = items.length
  return [`The person left ${n} new annotation${n === 1 ? '' : 's'} on the app in the browser (Marginalia) that you have not seen. Work ${n === 1 ? 'it' : 'them'} before you stop:`, listed(items, (i) => i.prompt)].join('\n')
}

/** Facts for the start of a turn or session: what is pending, and how it is worked. */
function contextText(items: readonly PushItem[]): string {
  const n = items.length
  return [
    `Marginalia: ${n} annotation${n === 1 ? '' : 's'} from the person ${n === 1 ? 'is' : 'are'} pending in this project's inbox:`,
    listed(items, (i) => `${i.id}${i.location ? ` at ${i.location}` : ''}${i.url ? ` on ${i.url}` : ''}: “${i.comment.replace(/\s+/g, ' ').slice(0, 200)}”`),
    'Annotations are acknowledged, replied to and resolved with `marginalia ack|reply|resolve ID` or the Marginalia MCP tools.',
  ].join('\n')
}
