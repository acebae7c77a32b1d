/**
 * What came with an annotation, as the person sees it: thumbnails of the screenshot and pasted
 * images (click to enlarge), and the page log (console errors, failed requests) collapsed.
 * Shared by the overlay's thread panel and the inbox's cards.
 */
import { h, type Child } from './dom.js'
import type { Attachment, PageEntry } from './types.js'

/** An attachment's address on the server at `base` (the overlay's server, or '' on the inbox page: same origin). */
function attachmentUrl(base: string, sha256: string): string {
  return `${base}/api/attachments/${sha256}`
}

/** Show one image large, over everything; a click or Esc closes it. */
function enlarge(from: HTMLElement, a: Attachment, base: string): void {
  const root = from.getRootNode() as Document | ShadowRoot
  const parent = root instanceof Document ? root.body : root
  const close = () => {
    box.remove()
    document.removeEventListener('keydown', onKey, true)
  }
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.stopPropagation()
      close()
    }
  }
  const box = h(
    'div',
    { class: 'lightbox', role: 'dialog', 'aria-label': a.kind === 'screenshot' ? 'Screenshot' : 'Image', onclick: close },
    h('img', { src: attachmentUrl(base, a.sha256), alt: a.kind === 'screenshot' ? 'Screenshot of the annotated element' : 'Attached image' }),
  )
  document.addEventListener('keydown', onKey, true)
  parent.appendChild(box)
}

/** Thumbnails of `list`, served from `base`; null when there are none. */
export function attachmentStrip(list: readonly Attachment[] | undefined, base: string): HTMLDivElement | null {
  if (!list || list.length === 0) return null
  return h(
    'div',
    { class: 'attachments', 'aria-label': 'Images' },
    ...list.map((a) => {
      const label = a.kind === 'screenshot' ? 'Screenshot' : 'Image'
      const button: HTMLButtonElement = h(
        'button',
        { type: 'button', class: 'thumb', 'data-kind': a.kind, title: `${label} ${a.width}×${a.height} (click to enlarge)`, onclick: () => enlarge(button, a, base) },
        h('img', { src: attachmentUrl(base, a.sha256), alt: label, loading: 'lazy' }),
      )
      return button
    }),
  )
}

function entryLine(e: PageEntry): Child {
  const when = new Date(e.at).toLocaleTimeString()
  return h('li', { 'data-kind': e.kind }, h('b', {}, e.kind), ' ', h('time', { datetime: e.at }, when), ' ', e.message, e.stack ? h('pre', {}, e.stack) : null)
}

/** The page log, collapsed: "2 console errors, 1 failed request". */
export function pageContextView(context: { entries: readonly PageEntry[] } | undefined): HTMLDetailsElement | null {
  const entries = context?.entries ?? []
  if (entries.length === 0) return null
  const failed = entries.filter((e) => e.kind === 'network').length
  const logged = entries.length - failed
  const parts = [logged > 0 ? `${logged} console ${logged === 1 ? 'entry' : 'entries'}` : '', failed > 0 ? `${failed} failed ${failed === 1 ? 'request' : 'requests'}` : ''].filter(Boolean)
  return h('details', { class: 'page-log' }, h('summary', {}, parts.join(', ')), h('ol', {}, ...entries.map(entryLine)))
}
