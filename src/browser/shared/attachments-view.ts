/**
 * What came with an annotation, as the person sees it: thumbnails of the screenshot and pasted
 * images (click to enlarge), and the page log (console errors, failed requests) collapsed.
 * Shared by the overlay's thread panel and the inbox's cards.
 */
import { h, type Child } from './dom.js'
import type { Attachment, PageEntry, Step } from './types.js'
import { stepLines } from '../../store/steps.js'

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
    { class: 'lightbox', role: 'dialog', 'aria-label': LABEL[a.kind], onclick: close },
    h('img', { src: attachmentUrl(base, a.sha256), alt: a.kind === 'screenshot' ? 'Screenshot of the annotated element' : a.kind === 'after' ? 'The element once fixed' : 'Attached image' }),
  )
  document.addEventListener('keydown', onKey, true)
  parent.appendChild(box)
}

const LABEL: Readonly<Record<Attachment['kind'], string>> = { screenshot: 'Screenshot', image: 'Image', after: 'After' }

/** One thumbnail that enlarges on click. */
function thumb(a: Attachment, base: string, label = LABEL[a.kind]): HTMLButtonElement {
  const button: HTMLButtonElement = h(
    'button',
    { type: 'button', class: 'thumb', 'data-kind': a.kind, title: `${label} ${a.width}×${a.height} (click to enlarge)`, onclick: () => enlarge(button, a, base) },
    h('img', { src: attachmentUrl(base, a.sha256), alt: label, loading: 'lazy' }),
  )
  return button
}

/** The element when it was annotated and once fixed, side by side (the "before" may be missing: a note without a screenshot). */
export function beforeAfter(before: Attachment | undefined, after: Attachment, base: string): HTMLDivElement {
  const figure = (a: Attachment | undefined, caption: string) =>
    h('figure', { 'data-side': caption.toLowerCase() }, a ? thumb(a, base, caption) : h('div', { class: 'none' }, 'no screenshot'), h('figcaption', {}, caption))
  return h('div', { class: 'before-after', 'aria-label': 'Before and after' }, figure(before, 'Before'), figure(after, 'After'))
}

/** Thumbnails of `list`, served from `base`; null when there are none. */
export function attachmentStrip(list: readonly Attachment[] | undefined, base: string): HTMLDivElement | null {
  if (!list || list.length === 0) return null
  return h(
    'div',
    { class: 'attachments', 'aria-label': 'Images' },
    ...list.map((a) => thumb(a, base)),
  )
}

function entryLine(e: PageEntry): Child {
  const when = new Date(e.at).toLocaleTimeString()
  return h('li', { 'data-kind': e.kind }, h('b', {}, e.kind), ' ', h('time', { datetime: e.at }, when), ' ', e.message, e.stack ? h('pre', {}, e.stack) : null)
}

/** The steps to reproduce, collapsed: "Steps to reproduce (7)", one numbered line each. */
export function stepsView(steps: readonly Step[] | undefined): HTMLDetailsElement | null {
  if (!steps?.length) return null
  return h('details', { class: 'steps' }, h('summary', {}, `Steps to reproduce (${steps.length})`), h('ol', { class: 'step-lines' }, ...stepLines(steps).map((line) => h('li', {}, line.replace(/^\d+\. /, '')))))
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
