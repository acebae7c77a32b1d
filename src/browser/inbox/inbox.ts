/**
 * The inbox page (served at `/`): every session and its annotations, filterable by status, kept
 * live over Server-Sent Events. The person sees what is pending, what the agent acknowledged, its
 * replies and questions, what is resolved or dismissed and when — and can reply, reopen and
 * delete. Annotations load a page at a time (limit/cursor), so a big store opens fast.
 */
import { Api, ApiError, UnreachableError, describeError } from '../shared/api.js'
import { h, replace } from '../shared/dom.js'
import { AGENT_DETAIL, AGENT_LABEL, STATUS_LABEL, agentState, clip, fullTime, openQuestionOf, timeAgo } from '../shared/format.js'
import { LIMITS } from '../../store/vocabulary.js'
import { LiveStream } from '../shared/live.js'
import type { Annotation, AnnotationStatus, Presence, Reply, Session, StoreEvent } from '../shared/types.js'

const FILTERS: readonly (AnnotationStatus | 'all')[] = ['all', 'pending', 'acknowledged', 'resolved', 'dismissed']
const PAGE = 100

type Filter = AnnotationStatus | 'all'

interface CardState {
  replyOpen: boolean
  replyText: string
}

class Inbox {
  private readonly api = new Api(location.origin)
  private filter: Filter = readFilter()
  private readonly sessions = new Map<string, Session>()
  private readonly annotations = new Map<string, Annotation>()
  /** Load order: oldest first, as the API pages them. */
  private order: string[] = []
  private nextCursor: string | undefined
  private total = 0
  private stream: LiveStream | undefined
  private presence: Presence | undefined
  private live: 'connecting' | 'live' | 'offline' = 'connecting'
  private countTimer: ReturnType<typeof setTimeout> | undefined
  private questionTimer: ReturnType<typeof setTimeout> | undefined
  private readonly cardState = new Map<string, CardState>()
  private readonly flash = new Set<string>()
  private loading = false
  private generation = 0

  private readonly el = {
    agent: byId('agent'),
    live: byId('live'),
    filters: byId('filters'),
    questions: byId('questions'),
    list: byId('list'),
    more: byId('more'),
    error: byId('error'),
  }

  start(): void {
    this.renderFilters({})
    void this.reload()
    setInterval(() => this.refreshTimes(), 30_000)
    setInterval(() => void this.pollHealth(), 20_000)
    window.addEventListener('popstate', () => {
      this.filter = readFilter()
      this.renderFilters({})
      void this.reload()
    })
  }

  // ------------------------------------------------------------------ loading

  private async reload(): Promise<void> {
    const generation = ++this.generation
    this.loading = true
    this.renderList()
    try {
      const [health, sessions] = await Promise.all([this.api.health(), this.api.allSessions()])
      const page = await this.api.annotations({ limit: PAGE, ...(this.filter === 'all' ? {} : { status: this.filter }) })
      if (generation !== this.generation) return // a newer load (another filter) is under way
      this.presence = health.agent
      this.sessions.clear()
      for (const s of sessions) this.sessions.set(s.id, s)
      this.annotations.clear()
      this.order = []
      this.add(page.annotations)
      this.nextCursor = page.nextCursor
      this.total = page.total
      this.loading = false
      this.showError(undefined)
      // Follow from the rev the first list reflects (earlier events are in what we loaded).
      this.stream?.close()
      this.stream = new LiveStream(`${location.origin}/api/events`, Math.min(health.rev, page.rev), {
        event: (e) => this.onEvent(e),
        reset: () => void this.reload(),
        presence: (p) => {
          this.presence = p
          this.renderAgent()
        },
        open: () => this.setLive('live'),
        down: () => this.setLive('offline'),
      })
      this.renderAll()
      void this.refreshCounts()
      void this.refreshQuestions()
    } catch (e) {
      if (generation !== this.generation) return
      this.loading = false
      this.showError(e instanceof UnreachableError ? `${e.message} Retrying…` : describeError(e))
      this.setLive('offline')
      setTimeout(() => {
        if (generation === this.generation) void this.reload()
      }, 3_000)
      this.renderList()
    }
  }

  private async loadMore(): Promise<void> {
    if (this.nextCursor === undefined) return
    const generation = this.generation
    try {
      const page = await this.api.annotations({ limit: PAGE, cursor: this.nextCursor, ...(this.filter === 'all' ? {} : { status: this.filter }) })
      if (generation !== this.generation) return
      this.add(page.annotations)
      this.nextCursor = page.nextCursor
      this.total = page.total
      this.renderList()
    } catch (e) {
      this.showError(describeError(e))
    }
  }

  private add(list: Annotation[]): void {
    for (const a of list) {
      if (!this.annotations.has(a.id)) this.order.push(a.id)
      this.annotations.set(a.id, a)
    }
  }

  private async refreshCounts(): Promise<void> {
    try {
      const totals = await Promise.all(FILTERS.map((f) => this.api.annotations({ limit: 1, ...(f === 'all' ? {} : { status: f }) }).then((p) => p.total)))
      const counts: Partial<Record<Filter, number>> = {}
      FILTERS.forEach((f, i) => (counts[f] = totals[i]))
      this.renderFilters(counts)
    } catch {
      // keep the old numbers
    }
  }

  private async refreshQuestions(): Promise<void> {
    try {
      const { questions } = await this.api.questions()
      this.renderQuestions(questions)
    } catch {
      // keep what is shown
    }
  }

  private async pollHealth(): Promise<void> {
    try {
      const health = await this.api.health()
      this.presence = health.agent
      this.renderAgent()
    } catch {
      this.setLive('offline')
    }
  }

  private soon(kind: 'counts' | 'questions'): void {
    if (kind === 'counts') {
      if (this.countTimer !== undefined) clearTimeout(this.countTimer)
      this.countTimer = setTimeout(() => void this.refreshCounts(), 200)
    } else {
      if (this.questionTimer !== undefined) clearTimeout(this.questionTimer)
      this.questionTimer = setTimeout(() => void this.refreshQuestions(), 200)
    }
  }

  // ------------------------------------------------------------------ live events

  private onEvent(e: StoreEvent): void {
    switch (e.type) {
      case 'session.created':
        this.sessions.set(e.session.id, e.session)
        return
      case 'annotation.created': {
        const matches = this.filter === 'all' || e.annotation.status === this.filter
        // Newest come last: show it now only if every earlier page is loaded (else "load more" reaches it).
        if (matches && this.nextCursor === undefined) {
          this.add([e.annotation])
          this.flash.add(e.annotation.id)
          this.total++
          this.renderList()
        }
        this.soon('counts')
        return
      }
      case 'annotation.status_changed': {
        const a = this.annotations.get(e.annotationId)
        if (a) {
          a.status = e.to
          a.rev = e.rev
          a.updatedAt = e.at
          if (e.to === 'resolved' || e.to === 'dismissed') a.resolvedAt = e.at
          if (e.reply) addReply(a, e.reply)
          this.flash.add(a.id)
          this.renderCard(a.id)
        }
        this.soon('counts')
        this.soon('questions')
        return
      }
      case 'annotation.replied': {
        const a = this.annotations.get(e.annotationId)
        if (a) {
          addReply(a, e.reply)
          a.rev = e.rev
          a.updatedAt = e.at
          this.flash.add(a.id)
          this.renderCard(a.id)
        }
        this.soon('questions')
        return
      }
      case 'annotation.deleted':
      case 'annotation.archived':
        if (this.annotations.delete(e.annotationId)) {
          this.order = this.order.filter((id) => id !== e.annotationId)
          this.total = Math.max(0, this.total - 1)
          this.renderList()
        }
        this.soon('counts')
        this.soon('questions')
        return
    }
  }

  private setLive(state: 'connecting' | 'live' | 'offline'): void {
    this.live = state
    this.el.live.setAttribute('data-state', state)
    this.el.live.textContent = state === 'live' ? 'Live' : state === 'offline' ? 'Server unreachable — reconnecting' : 'Connecting…'
    this.renderAgent()
  }

  // ------------------------------------------------------------------ actions

  private async act(id: string, action: () => Promise<Annotation | void>, done?: string): Promise<void> {
    try {
      const updated = await action()
      if (updated) {
        const old = this.annotations.get(id)
        if (old) for (const r of old.replies) addReply(updated, r)
        updated.replies.sort((x, y) => (x.createdAt < y.createdAt ? -1 : 1))
        this.annotations.set(id, updated)
        this.renderCard(id)
      }
      if (done) this.toast(done)
      this.soon('counts')
      this.soon('questions')
    } catch (e) {
      this.toast(e instanceof ApiError || e instanceof UnreachableError ? e.message : describeError(e), true)
    }
  }

  private setFilter(f: Filter): void {
    if (f === this.filter) return
    this.filter = f
    const url = new URL(location.href)
    if (f === 'all') url.searchParams.delete('status')
    else url.searchParams.set('status', f)
    history.pushState(null, '', url)
    this.renderFilters({})
    void this.reload()
  }

  // ------------------------------------------------------------------ rendering

  private renderAll(): void {
    this.renderAgent()
    this.renderList()
  }

  private renderAgent(): void {
    const state = this.live === 'offline' ? 'offline' : agentState(this.presence)
    this.el.agent.setAttribute('data-state', state)
    this.el.agent.title = state === 'offline' ? "Can't reach the server." : AGENT_DETAIL[state]
    replace(this.el.agent, h('span', { class: 'dot', 'aria-hidden': 'true' }), state === 'offline' ? 'Server unreachable' : AGENT_LABEL[state])
  }

  private renderFilters(counts: Partial<Record<Filter, number>>): void {
    const previous = new Map<string, string>()
    for (const b of this.el.filters.querySelectorAll('button')) previous.set(b.dataset.filter ?? '', b.querySelector('.n')?.textContent ?? '')
    replace(
      this.el.filters,
      ...FILTERS.map((f) => {
        const n = counts[f] !== undefined ? String(counts[f]) : (previous.get(f) ?? '')
        return h(
          'button',
          { type: 'button', class: 'filter', 'data-filter': f, 'data-status': f, 'aria-pressed': String(f === this.filter), onclick: () => this.setFilter(f) },
          f === 'all' ? 'All' : STATUS_LABEL[f],
          h('span', { class: 'n' }, n),
        )
      }),
    )
  }

  private renderQuestions(questions: { annotation: Annotation; question: Reply }[]): void {
    const box = this.el.questions
    if (questions.length === 0) {
      box.hidden = true
      replace(box)
      return
    }
    box.hidden = false
    const typed = new Map<string, string>()
    for (const t of box.querySelectorAll<HTMLTextAreaElement>('textarea[data-id]')) typed.set(t.dataset.id ?? '', t.value)
    replace(
      box,
      h('h2', {}, h('span', { class: 'q-badge', 'aria-hidden': 'true' }, '?'), `The agent is asking you (${questions.length})`),
      ...questions.map(({ annotation: a, question }) => {
        const answer = h('textarea', { 'data-id': a.id, 'aria-label': `Answer the agent about: ${clip(a.comment, 60)}`, placeholder: 'Your answer…', maxlength: LIMITS.message })
        answer.value = typed.get(a.id) ?? ''
        const session = this.sessions.get(a.sessionId)
        return h(
          'article',
          { class: 'question' },
          h('div', { class: 'q-text' }, question.message),
          h('div', { class: 'q-about' }, 'About ', h('q', {}, clip(a.comment, 140)), session ? ` on ${shortUrl(session.url)}` : '', ' · ', timeEl(question.createdAt)),
          h(
            'form',
            {
              class: 'q-form',
              onsubmit: (e: Event) => {
                e.preventDefault()
                const message = answer.value.trim()
                if (message === '') return
                void this.act(a.id, () => this.api.reply(a.id, clip(message, LIMITS.message)), 'Answer sent to the agent.').then(() => this.refreshQuestions())
              },
            },
            answer,
            h('button', { type: 'submit', class: 'btn primary' }, 'Answer'),
          ),
        )
      }),
    )
  }

  private renderList(): void {
    const list = this.el.list
    if (this.loading && this.annotations.size === 0) {
      replace(list, h('p', { class: 'empty' }, 'Loading…'))
      replace(this.el.more)
      return
    }
    const bySession = new Map<string, string[]>()
    for (const id of this.order) {
      const a = this.annotations.get(id)
      if (!a) continue
      const ids = bySession.get(a.sessionId) ?? []
      ids.push(id)
      bySession.set(a.sessionId, ids)
    }
    if (bySession.size === 0) {
      replace(
        list,
        h(
          'div',
          { class: 'empty' },
          h('p', {}, this.filter === 'all' ? 'No annotations yet.' : `No ${STATUS_LABEL[this.filter as AnnotationStatus].toLowerCase()} annotations.`),
          this.filter === 'all'
            ? h('p', {}, 'Add ', h('code', {}, `<script src="${location.origin}/overlay.js" defer></script>`), ' to your app, press Annotate (Alt+Shift+A) and click something.')
            : null,
        ),
      )
    } else {
      // Pages with the latest activity first; inside a page, oldest first (the order of the conversation).
      const latest = (ids: string[]) => ids.reduce((m, id) => (this.annotations.get(id)!.updatedAt > m ? this.annotations.get(id)!.updatedAt : m), '')
      const groups = [...bySession].sort(([, a], [, b]) => (latest(a) < latest(b) ? 1 : latest(a) > latest(b) ? -1 : 0))
      replace(
        list,
        ...groups.map(([sessionId, ids]) => {
          const s = this.sessions.get(sessionId)
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
                ` · ${ids.length} annotation${ids.length === 1 ? '' : 's'}`,
                s ? ' · started ' : '',
                s ? timeEl(s.createdAt) : '',
              ),
            ),
            h('div', { class: 'cards' }, ...ids.map((id) => this.card(this.annotations.get(id)!))),
          )
        }),
      )
    }
    const remaining = this.total - this.annotations.size
    replace(
      this.el.more,
      this.nextCursor !== undefined ? h('button', { type: 'button', class: 'btn', onclick: () => void this.loadMore() }, `Load more (${Math.max(remaining, 1)} more)`) : null,
      h('p', { class: 'hint' }, this.nextCursor !== undefined ? 'Annotations load oldest first.' : ''),
    )
  }

  private renderCard(id: string): void {
    const old = this.el.list.querySelector(`article.card[data-id="${CSS.escape(id)}"]`)
    const a = this.annotations.get(id)
    if (!old || !a) return
    // Keep keyboard focus in the card across the re-render (on the same control when it still exists).
    const focused = document.activeElement instanceof HTMLElement && old.contains(document.activeElement) ? document.activeElement : undefined
    const action = focused?.dataset.action
    const fresh = this.card(a)
    old.replaceWith(fresh)
    if (focused) (fresh.querySelector<HTMLElement>(`[data-action="${action ?? ''}"]`) ?? fresh.querySelector<HTMLElement>('[data-action="reply"]'))?.focus()
  }

  private card(a: Annotation): HTMLElement {
    const state = this.cardState.get(a.id) ?? { replyOpen: false, replyText: '' }
    this.cardState.set(a.id, state)
    const question = openQuestionOf(a)
    const matches = this.filter === 'all' || a.status === this.filter
    const reply = h('textarea', {
      'aria-label': 'Reply',
      placeholder: question ? 'Answer the agent…' : 'Reply to the agent…',
      maxlength: LIMITS.message,
      oninput: (e: Event) => (state.replyText = (e.target as HTMLTextAreaElement).value),
    })
    reply.value = state.replyText
    reply.dataset.action = 'reply-text'
    const replyForm = h(
      'form',
      {
        class: 'reply-form',
        hidden: !state.replyOpen,
        onsubmit: (e: Event) => {
          e.preventDefault()
          const message = reply.value.trim()
          if (message === '') return
          state.replyText = ''
          state.replyOpen = false
          void this.act(a.id, () => this.api.reply(a.id, clip(message, LIMITS.message)), 'Reply sent.')
        },
      },
      reply,
      h(
        'div',
        { class: 'row' },
        h(
          'button',
          {
            type: 'button',
            class: 'btn',
            onclick: () => {
              state.replyOpen = false
              this.renderCard(a.id)
            },
          },
          'Cancel',
        ),
        h('button', { type: 'submit', class: 'btn primary' }, 'Send reply'),
      ),
    )
    reply.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault()
        replyForm.requestSubmit()
      }
    })
    const del = h('button', { type: 'button', class: 'btn danger', 'data-action': 'delete' }, 'Delete')
    let armed: ReturnType<typeof setTimeout> | undefined
    del.addEventListener('click', () => {
      if (armed === undefined) {
        del.textContent = 'Confirm delete'
        del.classList.add('confirm')
        armed = setTimeout(() => {
          armed = undefined
          del.textContent = 'Delete'
          del.classList.remove('confirm')
        }, 4_000)
        return
      }
      clearTimeout(armed)
      void this.act(a.id, async () => {
        await this.api.remove(a.id)
        this.annotations.delete(a.id)
        this.order = this.order.filter((x) => x !== a.id)
        this.total = Math.max(0, this.total - 1)
        this.renderList()
      }, 'Deleted.')
    })
    const when = [h('span', {}, 'created ', timeEl(a.createdAt))]
    if (a.status === 'resolved' || a.status === 'dismissed') when.push(h('span', {}, ` · ${a.status} `, timeEl(a.resolvedAt ?? a.updatedAt)))
    else if (a.updatedAt !== a.createdAt) when.push(h('span', {}, ' · updated ', timeEl(a.updatedAt)))
    const flash = this.flash.delete(a.id)
    const card = h(
      'article',
      { class: `card${flash ? ' flash' : ''}${matches ? '' : ' elsewhere'}`, 'data-id': a.id, 'data-status': a.status, 'aria-label': `${STATUS_LABEL[a.status]}: ${clip(a.comment, 80)}` },
      h(
        'div',
        { class: 'card-head' },
        h('span', { class: 'chip', 'data-status': a.status }, STATUS_LABEL[a.status]),
        a.intent ? h('span', { class: 'tag' }, a.intent) : null,
        a.severity ? h('span', { class: 'tag', 'data-severity': a.severity }, a.severity) : null,
        question ? h('span', { class: 'tag ask' }, 'Agent asks') : null,
        h('span', { class: 'when' }, ...when),
      ),
      h('p', { class: 'comment' }, a.comment),
      a.element || a.url
        ? h(
            'div',
            { class: 'where' },
            a.element ? h('code', { title: a.element.path ?? a.element.selector }, clip(a.element.selector, 140)) : null,
            a.element?.text ? h('span', { class: 'snippet' }, `“${clip(a.element.text, 80)}”`) : null,
            a.url ? h('a', { href: a.url, target: '_blank', rel: 'noopener', class: 'page-link' }, shortUrl(a.url)) : null,
          )
        : null,
      a.selectedText ? h('blockquote', { class: 'selected' }, clip(a.selectedText, 400)) : null,
      a.replies.length ? h('ol', { class: 'replies', 'aria-label': 'Replies' }, ...a.replies.map(replyItem)) : null,
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'btn',
            'aria-expanded': String(state.replyOpen),
            'data-action': 'reply',
            onclick: () => {
              state.replyOpen = !state.replyOpen
              this.renderCard(a.id)
              if (state.replyOpen) this.el.list.querySelector<HTMLTextAreaElement>(`article.card[data-id="${CSS.escape(a.id)}"] textarea`)?.focus()
            },
          },
          question ? 'Answer' : 'Reply',
        ),
        a.status === 'pending'
          ? null
          : h(
              'button',
              { type: 'button', class: 'btn', 'data-action': 'reopen', onclick: () => void this.act(a.id, () => this.api.reopen(a.id), 'Reopened: pending again.') },
              'Reopen',
            ),
        h('span', { class: 'spacer' }),
        del,
      ),
      replyForm,
    )
    return card
  }

  private refreshTimes(): void {
    for (const t of document.querySelectorAll<HTMLTimeElement>('time[datetime]')) t.textContent = timeAgo(t.dateTime)
  }

  private showError(message: string | undefined): void {
    this.el.error.hidden = message === undefined
    this.el.error.textContent = message ?? ''
  }

  private toastTimer: ReturnType<typeof setTimeout> | undefined

  private toast(message: string, error = false): void {
    const t = byId('toast')
    t.textContent = message
    t.className = `toast show${error ? ' bad' : ''}`
    if (this.toastTimer !== undefined) clearTimeout(this.toastTimer)
    this.toastTimer = setTimeout(() => (t.className = 'toast'), 3_000)
  }
}

function byId(id: string): HTMLElement {
  const el = document.getElementById(id)
  if (!el) throw new Error(`inbox: #${id} is missing from the page`)
  return el
}

function readFilter(): Filter {
  const s = new URL(location.href).searchParams.get('status')
  return s && (FILTERS as readonly string[]).includes(s) ? (s as Filter) : 'all'
}

function addReply(a: Annotation, reply: Reply): void {
  if (!a.replies.some((r) => r.id === reply.id)) a.replies.push(reply)
}

function shortUrl(url: string): string {
  try {
    const u = new URL(url)
    return `${u.host}${u.pathname}${u.search}`
  } catch {
    return url
  }
}

function timeEl(iso: string): HTMLTimeElement {
  return h('time', { datetime: iso, title: fullTime(iso) }, timeAgo(iso))
}

function replyItem(r: Reply): HTMLLIElement {
  const who = r.author === 'agent' ? (r.kind === 'question' ? 'Agent asks' : 'Agent') : 'You'
  return h(
    'li',
    { class: 'reply', 'data-author': r.author, 'data-kind': r.kind ?? 'message' },
    h('div', { class: 'who' }, h('b', {}, who), ' · ', timeEl(r.createdAt)),
    h('p', {}, r.message),
  )
}

new Inbox().start()
