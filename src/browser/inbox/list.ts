/**
 * The inbox's list: the loaded annotations grouped by session (page), the page with the latest
 * activity first and inside it the oldest first (the order of the conversation); an empty list
 * says how to start; "Load more" when the server has more.
 */
import { h } from '../shared/dom.js'
import { STATUS_LABEL, shortUrl } from '../shared/format.js'
import { timeEl } from '../shared/thread.js'
import type { Annotation, Session } from '../shared/types.js'
import type { Filter } from './filters.js'

/** One section per session, in the order described above; empty when there are no annotations. */
export function sessionGroups(annotations: readonly Annotation[], sessions: ReadonlyMap<string, Session>, card: (a: Annotation) => HTMLElement): HTMLElement[] {
  const bySession = new Map<string, Annotation[]>()
  for (const a of annotations) {
    const group = bySession.get(a.sessionId) ?? []
    group.push(a)
    bySession.set(a.sessionId, group)
  }
  const latest = (group: Annotation[]) => group.reduce((m, a) => (a.updatedAt > m ? a.updatedAt : m), '')
  const groups = [...bySession].sort(([, a], [, b]) => (latest(a) < latest(b) ? 1 : latest(a) > latest(b) ? -1 : 0))
  return groups.map(([sessionId, group]) => {
    const s = sessions.get(sessionId)
    return h(
      'section',
      { class: 'session', 'data-session': sessionId },
      h(
        'header',
        { class: 'session-head' },
        h('h2', {}, s?.name ?? (s ? shortUrl(s.url) : sessionId)),
        h(
          'span',
          { class: 'session-meta' },
          s ? h('a', { href: s.url, target: '_blank', rel: 'noopener' }, shortUrl(s.url)) : null,
          ` · ${group.length} annotation${group.length === 1 ? '' : 's'}`,
          s ? ' · started ' : '',
          s ? timeEl(s.createdAt) : '',
        ),
      ),
      h('div', { class: 'cards' }, ...group.map(card)),
    )
  })
}

/** What an empty list says. */
export function emptyList(filter: Filter): HTMLElement {
  return h(
    'div',
    { class: 'empty' },
    h('p', {}, filter === 'all' ? 'No annotations yet.' : `No ${STATUS_LABEL[filter].toLowerCase()} annotations.`),
    filter === 'all' ? h('p', {}, 'Add ', h('code', {}, `<script src="${location.origin}/overlay.js" defer></script>`), ' to your app, press Annotate (Alt+Shift+A) and click something.') : null,
  )
}

/** The "Load more" button and its hint, while there is more. */
export function moreButton(remaining: number | undefined, loadMore: () => void): Node[] {
  if (remaining === undefined) return [h('p', { class: 'hint' }, '')]
  return [h('button', { type: 'button', class: 'btn', onclick: loadMore }, `Load more (${Math.max(remaining, 1)} more)`), h('p', { class: 'hint' }, 'Annotations load oldest first.')]
}
