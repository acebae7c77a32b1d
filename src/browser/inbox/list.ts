/**
 * The inbox's list: the loaded annotations grouped by session (page of the app), the groups in
 * the order their first annotation comes in the view (newest first by default) and inside each
 * the view's order. A group header counts what matches on the server, not only what is loaded.
 * An empty list says how to start; "Load more" while the server has more.
 */
import { h } from '../shared/dom.js'
import { shortUrl } from '../shared/format.js'
import { timeEl } from '../shared/thread.js'
import { pageLink } from '../shared/links.js'
import type { Annotation, Session } from '../shared/types.js'
import { TAB_LABEL, isFiltered, type View } from './filters.js'

/** One section per session, in the order described above; empty when there are no annotations. */
export function sessionGroups(
  ordered: readonly Annotation[],
  sessions: ReadonlyMap<string, Session>,
  totals: Readonly<Record<string, number>>,
  card: (a: Annotation) => HTMLElement,
): HTMLElement[] {
  const bySession = new Map<string, Annotation[]>()
  for (const a of ordered) {
    const group = bySession.get(a.sessionId) ?? []
    group.push(a)
    bySession.set(a.sessionId, group)
  }
  return [...bySession].map(([sessionId, group]) => {
    const s = sessions.get(sessionId)
    const total = Math.max(totals[sessionId] ?? 0, group.length)
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
          s ? pageLink(s.url) : null,
          ' · ',
          h('span', { class: 'group-total', 'data-total': total }, `${total} annotation${total === 1 ? '' : 's'}`),
          total > group.length ? ` (${group.length} shown)` : '',
          s ? ' · started ' : '',
          s ? timeEl(s.createdAt) : '',
        ),
      ),
      h('div', { class: 'cards' }, ...group.map(card)),
    )
  })
}

/** What an empty list says. */
export function emptyList(view: View, nothingAtAll: boolean): HTMLElement {
  const start = nothingAtAll && !isFiltered(view)
  return h(
    'div',
    { class: 'empty' },
    h('p', {}, start ? 'No annotations yet.' : isFiltered(view) ? 'Nothing matches this search and these filters.' : `No ${TAB_LABEL[view.status].toLowerCase()} annotations.`),
    start ? h('p', {}, 'Add ', h('code', {}, `<script src="${location.origin}/overlay.js" defer></script>`), ' to your app, press Annotate (Alt+Shift+A) and click something.') : null,
  )
}

/** The "Load more" button and its hint, while there is more. */
export function moreButton(remaining: number | undefined, view: View, loadMore: () => void): Node[] {
  if (remaining === undefined) return [h('p', { class: 'hint' }, '')]
  return [h('button', { type: 'button', class: 'btn', 'data-action': 'more', onclick: loadMore }, `Load more (${Math.max(remaining, 1)} more)`), h('p', { class: 'hint' }, view.sort === 'newest' ? 'Newest first.' : 'Oldest first.')]
}
