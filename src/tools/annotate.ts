/**
 * An agent files an annotation: a reviewing agent leaves findings for a fixing agent or for the
 * person. It is the agent's (`author: 'agent'`, and its identity in team mode), on a page by URL
 * or session, on an element by selector or by source location. A browser showing the page (now,
 * or when one opens it) finds the element, and its answer anchors the annotation as a person's
 * is anchored: fingerprint, label, box, screenshot.
 */
import { z } from 'zod'
import { ValidationError } from '../store/errors.js'
import { INTENTS, SEVERITIES, type Session } from '../store/model.js'
import type { Store } from '../store/store.js'
import { currentActor } from '../store/actor.js'
import { defineTool, type ToolContext } from './define.js'

/** The annotations each agent filed, per store: the MCP session's (or, over stdio, the process's) — how an agent without an identity knows its own. */
const filed = new WeakMap<Store, Map<string, Set<string>>>()
const callerKey = (ctx: ToolContext) => ctx.mcp?.sessionId ?? 'local'

/** Whether the calling agent filed `a`: by its identity in team mode, else by this connection. */
export function filedByCaller(ctx: ToolContext, a: { id: string; author?: 'agent' | undefined; by?: { id: string } | undefined }): boolean {
  if (a.author !== 'agent') return false
  const actor = currentActor()
  if (actor && a.by) return a.by.id === actor.id
  return filed.get(ctx.store)?.get(callerKey(ctx))?.has(a.id) ?? false
}

/** The selector that finds the element a file and line write (the build plugin marks elements `data-marginalia-source="file:line:column"`). */
function sourceSelector(file: string, line: number): string {
  return `[data-marginalia-source^="${file.replace(/["\\]/g, '\\$&')}:${line}:"]`
}

/** The session of a page: the newest one with its address (origin and path, as the overlay names pages), else a new one. */
async function sessionFor(store: Store, url: string): Promise<Session> {
  let page: string
  try {
    const u = new URL(url)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not a web page')
    page = u.origin + u.pathname
  } catch {
    throw new ValidationError([{ path: 'url', message: 'must be an absolute http: or https: URL of the page, e.g. http://localhost:5173/checkout' }])
  }
  const found = store.listSessions().findLast((s) => s.url === page)
  return found ?? store.createSession({ url: page })
}

/** An optional word from a list (kept out of the published schema to keep it lean), or a clear error naming the words. */
function oneOf<T extends string>(field: string, value: string | undefined, words: readonly T[]): T | undefined {
  if (value === undefined) return undefined
  if ((words as readonly string[]).includes(value)) return value as T
  throw new ValidationError([{ path: field, message: `must be one of ${words.join(', ')}` }])
}

export const annotate = defineTool({
  name: 'annotate',
  description: 'File an annotation: url or sessionId, selector or source.',
  // Lean on purpose (tools/list is read by every model): lengths and blanks are checked by the store's own input.
  input: z.strictObject({
    url: z.string().optional(),
    sessionId: z.string().optional(),
    selector: z.string().optional(),
    source: z.object({ file: z.string(), line: z.number().int() }).optional(),
    comment: z.string(),
    intent: z.string().optional(),
    severity: z.string().optional(),
  }),
  output: z.object({ id: z.string(), sessionId: z.string(), url: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async ({ url, sessionId, selector, source, comment, intent, severity }, ctx) => {
    const { store } = ctx
    if ((url === undefined) === (sessionId === undefined)) throw new ValidationError([{ path: url === undefined ? 'url' : 'sessionId', message: 'give the page as url or as sessionId (one of them)' }])
    if ((selector === undefined) === (source === undefined)) throw new ValidationError([{ path: selector === undefined ? 'selector' : 'source', message: 'give the element as selector or as source { file, line } (one of them)' }])
    if (source !== undefined && (source.file.trim() === '' || source.line < 1)) throw new ValidationError([{ path: 'source', message: 'needs a file (relative to the project root) and a 1-based line' }])
    const kind = oneOf('intent', intent, INTENTS)
    const weight = oneOf('severity', severity, SEVERITIES)
    const session = sessionId !== undefined ? store.getSession(sessionId) : await sessionFor(store, url!)
    const a = await store.addAnnotation(
      {
        sessionId: session.id,
        comment,
        url: session.url,
        element: { selector: selector ?? sourceSelector(source!.file, source!.line) },
        ...(source ? { source: { file: source.file, line: source.line } } : {}),
        ...(kind ? { intent: kind } : {}),
        ...(weight ? { severity: weight } : {}),
      },
      { author: 'agent' },
    )
    const mine = filed.get(store) ?? new Map<string, Set<string>>()
    filed.set(store, mine)
    const set = mine.get(callerKey(ctx)) ?? new Set<string>()
    mine.set(callerKey(ctx), set.add(a.id))
    return { id: a.id, sessionId: session.id, url: session.url }
  },
  render: (r) => `Filed ${r.id} on ${r.url}: the person's browser pins it on the element when it shows the page.`,
})
