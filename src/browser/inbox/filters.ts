/** The status filter: one button per status with its count, kept in the page's URL (`?status=`). */
import { ANNOTATION_STATUSES } from '../../store/vocabulary.js'
import { h, replace } from '../shared/dom.js'
import { STATUS_LABEL } from '../shared/format.js'
import type { AnnotationStatus } from '../shared/types.js'

export type Filter = AnnotationStatus | 'all'
export const FILTERS: readonly Filter[] = ['all', ...ANNOTATION_STATUSES]

/** The filter the URL names (`all` when it names none or an unknown one). */
export function readFilter(): Filter {
  const s = new URL(location.href).searchParams.get('status')
  return s && (FILTERS as readonly string[]).includes(s) ? (s as Filter) : 'all'
}

/** Put `f` in the URL as a new history entry (Back returns to the previous filter). */
export function writeFilter(f: Filter): void {
  const url = new URL(location.href)
  if (f === 'all') url.searchParams.delete('status')
  else url.searchParams.set('status', f)
  history.pushState(null, '', url)
}

export class FilterBar {
  constructor(
    private readonly element: HTMLElement,
    private readonly select: (f: Filter) => void,
  ) {}

  /** The buttons, `current` pressed; a filter missing from `counts` keeps the number it showed. */
  render(current: Filter, counts: Partial<Record<Filter, number>> = {}): void {
    const previous = new Map<string, string>()
    for (const b of this.element.querySelectorAll('button')) previous.set(b.dataset.filter ?? '', b.querySelector('.n')?.textContent ?? '')
    replace(
      this.element,
      ...FILTERS.map((f) => {
        const n = counts[f] !== undefined ? String(counts[f]) : (previous.get(f) ?? '')
        return h(
          'button',
          { type: 'button', class: 'filter', 'data-filter': f, 'data-status': f, 'aria-pressed': String(f === current), onclick: () => this.select(f) },
          f === 'all' ? 'All' : STATUS_LABEL[f],
          h('span', { class: 'n' }, n),
        )
      }),
    )
  }
}
