/**
 * What the inbox shows (the "view"): a status tab (Open = pending + acknowledged, the default),
 * the sort, search words and filters by page, intent, severity, reply author, who wrote the
 * annotation (a person, or "you") and which agent replied — kept in the
 * page's URL, so Back returns to the previous view and a link shares it. The status tabs carry
 * the server's totals; the toolbar holds the search box and the selects.
 */
import { ANNOTATION_STATUSES, INTENTS, LOCAL_AUTHOR, SEVERITIES } from '../../store/vocabulary.js'
import { h, replace } from '../shared/dom.js'
import { STATUS_LABEL, shortUrl } from '../shared/format.js'
import type { Annotation, AnnotationStatus, SearchParams, Session } from '../shared/types.js'
import type { Known, Roster } from './roster.js'

export type StatusTab = 'open' | 'all' | AnnotationStatus
const TABS: readonly StatusTab[] = ['open', ...ANNOTATION_STATUSES, 'all']
type Sort = 'newest' | 'oldest'

export interface View {
  status: StatusTab
  sort: Sort
  q: string
  session: string
  intent: string
  severity: string
  author: '' | 'agent' | 'human'
  /** Who wrote the annotation: a person's identity id, or `you` (no identity). */
  by: string
  /** Which agent replied: an agent's identity id. */
  agent: string
}

const DEFAULT_VIEW: View = { status: 'open', sort: 'newest', q: '', session: '', intent: '', severity: '', author: '', by: '', agent: '' }

const TAB_STATUSES: Record<StatusTab, readonly AnnotationStatus[] | undefined> = {
  open: ['pending', 'acknowledged'],
  all: undefined,
  pending: ['pending'],
  acknowledged: ['acknowledged'],
  resolved: ['resolved'],
  dismissed: ['dismissed'],
}

export const TAB_LABEL: Record<StatusTab, string> = { open: 'Open', all: 'All', ...STATUS_LABEL }

/** The view the URL names (defaults for what it does not name or names wrongly). */
export function readView(): View {
  const p = new URL(location.href).searchParams
  const pick = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const v = p.get(name)
    return v !== null && (allowed as readonly string[]).includes(v) ? (v as T) : fallback
  }
  return {
    status: pick('status', TABS, 'open'),
    sort: pick('sort', ['newest', 'oldest'] as const, 'newest'),
    q: p.get('q') ?? '',
    session: p.get('session') ?? '',
    intent: pick('intent', ['', ...INTENTS, 'none'], ''),
    severity: pick('severity', ['', ...SEVERITIES, 'none'], ''),
    author: pick('author', ['', 'agent', 'human'] as const, ''),
    by: identityParam(p.get('by')),
    agent: identityParam(p.get('agent')),
  }
}

/** An identity id from the URL, or '' when it does not look like one. */
function identityParam(value: string | null): string {
  return value !== null && /^[A-Za-z0-9_-]{1,100}$/.test(value) ? value : ''
}

/** Put `v` in the URL as a new history entry (defaults left out). */
export function writeView(v: View): void {
  const url = new URL(location.href)
  for (const key of Object.keys(DEFAULT_VIEW) as (keyof View)[]) {
    if (v[key] === DEFAULT_VIEW[key]) url.searchParams.delete(key)
    else url.searchParams.set(key, v[key])
  }
  if (url.href !== location.href) history.pushState(null, '', url)
}

/** The REST search for a view (`sort` always set, so the answer carries totals). */
export function searchParams(v: View, withStatus = true): SearchParams {
  const statuses = TAB_STATUSES[v.status]
  const out: SearchParams = { sort: v.sort }
  if (withStatus && statuses) out.status = statuses.join(',')
  if (v.session) out.sessionId = v.session
  if (v.intent) out.intent = v.intent
  if (v.severity) out.severity = v.severity
  if (v.author) out.author = v.author
  if (v.by) out.by = v.by
  if (v.agent) out.agent = v.agent
  if (v.q.trim()) out.q = v.q.trim()
  return out
}

/** Whether `a` belongs in the view: the server's rules (queries.ts `searchAnnotations`), for live changes. */
export function inView(a: Annotation, v: View): boolean {
  const statuses = TAB_STATUSES[v.status]
  if (statuses && !statuses.includes(a.status)) return false
  if (v.session && a.sessionId !== v.session) return false
  if (v.intent && (a.intent ?? 'none') !== v.intent) return false
  if (v.severity && (a.severity ?? 'none') !== v.severity) return false
  if (v.author && !a.replies.some((r) => r.author === v.author)) return false
  if (v.by && (a.by?.id ?? LOCAL_AUTHOR) !== v.by) return false
  if (v.agent && !a.replies.some((r) => r.by?.kind === 'agent' && r.by.id === v.agent)) return false
  const words = v.q.toLowerCase().split(/\s+/).filter((w) => w !== '')
  if (words.length === 0) return true
  const text = [a.comment, a.selectedText ?? '', ...a.replies.map((r) => r.message)].join('\n').toLowerCase()
  return words.every((w) => text.includes(w))
}

export function isFiltered(v: View): boolean {
  return v.q.trim() !== '' || v.session !== '' || v.intent !== '' || v.severity !== '' || v.author !== '' || v.by !== '' || v.agent !== ''
}

/** The number a tab shows, from the server's per-status totals. */
function tabCount(tab: StatusTab, statuses: Record<AnnotationStatus, number>): number {
  const list = TAB_STATUSES[tab] ?? ANNOTATION_STATUSES
  return list.reduce((n, s) => n + statuses[s], 0)
}

/** The status tabs with their totals. */
export class StatusTabs {
  constructor(
    private readonly element: HTMLElement,
    private readonly select: (tab: StatusTab) => void,
  ) {}

  /** `current` pressed; without `statuses` each tab keeps the number it showed. Focus stays on the focused tab. */
  render(current: StatusTab, statuses?: Record<AnnotationStatus, number>): void {
    const existing = this.element.querySelectorAll<HTMLButtonElement>('button[data-filter]')
    if (existing.length === TABS.length) {
      for (const b of existing) {
        const tab = b.dataset.filter as StatusTab
        b.setAttribute('aria-pressed', String(tab === current))
        if (statuses) b.querySelector('.n')!.textContent = String(tabCount(tab, statuses))
      }
      return
    }
    replace(
      this.element,
      ...TABS.map((tab) =>
        h(
          'button',
          { type: 'button', class: 'filter', 'data-filter': tab, 'data-status': tab, 'aria-pressed': String(tab === current), onclick: () => this.select(tab) },
          TAB_LABEL[tab],
          h('span', { class: 'n' }, statuses ? String(tabCount(tab, statuses)) : ''),
        ),
      ),
    )
  }
}

/** The search box and the selects. Typing searches after a pause; Enter or Ctrl+Enter at once; Esc clears. */
export class Toolbar {
  private readonly search: HTMLInputElement
  private readonly sort: HTMLSelectElement
  private readonly session: HTMLSelectElement
  private readonly intent: HTMLSelectElement
  private readonly severity: HTMLSelectElement
  private readonly author: HTMLSelectElement
  private readonly by: HTMLSelectElement
  private readonly agent: HTMLSelectElement
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    element: HTMLElement,
    private readonly change: (patch: Partial<View>) => void,
  ) {
    const select = (name: string, label: string, options: [string, string][]) =>
      h('select', { 'aria-label': label, 'data-filter-field': name, onchange: (e: Event) => this.change({ [name]: (e.target as HTMLSelectElement).value }) }, ...options.map(([value, text]) => h('option', { value }, text)))
    this.search = h('input', { type: 'search', class: 'search', placeholder: 'Search comments and replies', 'aria-label': 'Search comments and replies', maxlength: 200 })
    this.search.addEventListener('input', () => {
      clearTimeout(this.timer)
      this.timer = setTimeout(() => this.change({ q: this.search.value }), 250)
    })
    this.search.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault()
        clearTimeout(this.timer)
        this.change({ q: this.search.value })
      } else if (e.key === 'Escape' && this.search.value !== '') {
        e.preventDefault()
        clearTimeout(this.timer)
        this.search.value = ''
        this.change({ q: '' })
      }
    })
    this.sort = select('sort', 'Sort', [
      ['newest', 'Newest first'],
      ['oldest', 'Oldest first'],
    ])
    this.session = select('session', 'Page', [['', 'All pages']])
    this.intent = select('intent', 'Intent', [['', 'Any intent'], ...INTENTS.map((i): [string, string] => [i, cap(i)]), ['none', 'No intent']])
    this.severity = select('severity', 'Severity', [['', 'Any severity'], ...SEVERITIES.map((s): [string, string] => [s, cap(s)]), ['none', 'No severity']])
    this.author = select('author', 'Replies by', [
      ['', 'Any replies'],
      ['agent', 'Agent replied'],
      ['human', 'A person replied'],
    ])
    // Who wrote it and which agent answered: listed once the data names someone (local use alone shows neither).
    this.by = select('by', 'Written by', [['', 'By anyone']])
    this.agent = select('agent', 'Agent', [['', 'Any agent']])
    this.by.hidden = true
    this.agent.hidden = true
    replace(element, this.search, h('div', { class: 'selects' }, this.sort, this.session, this.intent, this.severity, this.author, this.by, this.agent))
  }

  /** Show `v`; the page select lists `sessions` (newest first), the people and agent selects `roster`. */
  render(v: View, sessions: ReadonlyMap<string, Session>, roster?: Roster): void {
    if (document.activeElement !== this.search) this.search.value = v.q
    const pages = [...sessions.values()].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1))
    const current = [...this.session.options].map((o) => o.value).join('\n')
    const wanted = ['', ...pages.map((s) => s.id)].join('\n')
    if (current !== wanted || (v.session && !sessions.has(v.session))) {
      replace(this.session, h('option', { value: '' }, 'All pages'), ...pages.map((s) => h('option', { value: s.id }, s.name ?? shortUrl(s.url))), v.session && !sessions.has(v.session) ? h('option', { value: v.session }, v.session) : null)
    }
    this.sort.value = v.sort
    this.session.value = v.session
    this.intent.value = v.intent
    this.severity.value = v.severity
    this.author.value = v.author
    if (roster) this.renderWho(v, roster)
  }

  private renderWho(v: View, roster: Roster): void {
    const people = roster.people()
    const agents = roster.agents()
    const label = (k: Known) => (k.revoked ? `${k.name} (revoked)` : k.name)
    // "You": annotations written with no identity, offered when there are some or nobody else wrote any.
    const byOptions: [string, string][] = [['', 'By anyone'], ...(roster.local || people.length === 0 ? [[LOCAL_AUTHOR, people.length === 0 ? 'By you' : 'By you (local)'] as [string, string]] : []), ...people.map((k): [string, string] => [k.id, `By ${label(k)}`])]
    const agentOptions: [string, string][] = [['', 'Any agent'], ...agents.map((k): [string, string] => [k.id, `${label(k)} replied`])]
    // One the URL names but the data has not (yet): listed by its id, so the select says what filters.
    if (v.by && !byOptions.some(([id]) => id === v.by)) byOptions.push([v.by, v.by])
    if (v.agent && !agentOptions.some(([id]) => id === v.agent)) agentOptions.push([v.agent, v.agent])
    setOptions(this.by, byOptions)
    setOptions(this.agent, agentOptions)
    this.by.hidden = people.length === 0 && agents.length === 0 && v.by === ''
    this.agent.hidden = agents.length === 0 && v.agent === ''
    this.by.value = v.by
    this.agent.value = v.agent
  }
}

/** Replace a select's options when they differ (value and text), keeping it as it is otherwise. */
function setOptions(select: HTMLSelectElement, options: readonly [string, string][]): void {
  const current = [...select.options].map((o) => `${o.value}\t${o.text}`).join('\n')
  if (current === options.map(([value, text]) => `${value}\t${text}`).join('\n')) return
  replace(select, ...options.map(([value, text]) => h('option', { value }, text)))
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)
