/**
 * One pending annotation as the push paths hand it to an agent: `marginalia watch` prints it as a
 * JSON line, the hooks and the list put its `prompt` in the agent's own answer. Built from a plain
 * record (the store's or a cheap read of its files): no zod, no store code, so a hook stays cheap.
 */

/** The fields of an annotation the push paths read. */
export interface PendingRecord {
  id: string
  sessionId?: string
  status: string
  comment: string
  url?: string
  author?: string
  createdAt?: string
  source?: { file?: string; line?: number; component?: string }
}

export interface PushItem {
  id: string
  comment: string
  url: string | null
  /** `file:line` in the app's source, or the file alone, or null when unknown. */
  location: string | null
  component: string | null
  status: string
  /** One line an agent can act on. */
  prompt: string
}

const COMMENT_IN_PROMPT = 300

function locationOf(a: PendingRecord): string | null {
  const file = a.source?.file
  if (typeof file !== 'string' || file === '') return null
  return typeof a.source?.line === 'number' ? `${file}:${a.source.line}` : file
}

export function pushItem(a: PendingRecord): PushItem {
  const location = locationOf(a)
  const component = typeof a.source?.component === 'string' && a.source.component !== '' ? a.source.component : null
  return { id: a.id, comment: a.comment, url: a.url ?? null, location, component, status: a.status, prompt: promptFor(a.id, a.comment, a.url, location, component) }
}

/** "The person asks on URL at FILE:LINE (Component): “comment”. Acknowledge …, make the change, resolve …" on one line. */
function promptFor(id: string, comment: string, url: string | undefined, location: string | null, component: string | null): string {
  const oneLine = comment.replace(/\s+/g, ' ').trim()
  const clipped = oneLine.length > COMMENT_IN_PROMPT ? `${oneLine.slice(0, COMMENT_IN_PROMPT - 1)}…` : oneLine
  const where = [url ? `on ${url}` : '', location ? `at ${location}` : '', component ? `(${component})` : ''].filter((s) => s !== '').join(' ')
  return `Annotation ${id}${where ? ` ${where}` : ''}: “${clipped}”. Acknowledge it (marginalia ack ${id}), make the change, then resolve it (marginalia resolve ${id} "what you changed").`
}

/** Pending, and filed by a person (an agent's own annotations are never pushed back to agents). Oldest first, ties by id. */
export function pushable(records: Iterable<PendingRecord>): PendingRecord[] {
  return [...records]
    .filter((a) => a.status === 'pending' && a.author !== 'agent')
    .sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}
