/**
 * The inbox page (served at `/`): every session and its annotations, filterable by status, kept
 * live over Server-Sent Events. The person sees what is pending, what the agent acknowledged, its
 * replies and questions, what is resolved or dismissed and when — and can reply, reopen and
 * delete. Annotations load a page at a time (limit/cursor), so a big store opens fast.
 *
 * This is the page's controller: the feed holds the data, the filter bar, the questions panel and
 * the cards draw it, and the controller wires them and runs the person's actions.
 */
import { setEditorBase } from '../shared/source.js'
import { Api, describeError } from '../shared/api.js'
import { h, replace } from '../shared/dom.js'
import { AGENT_DETAIL, AGENT_LABEL, agentState, timeAgo } from '../shared/format.js'
import { Toast } from '../shared/toast.js'
import type { Annotation } from '../shared/types.js'
import { Cards } from './cards.js'
import { InboxFeed, type LiveState } from './feed.js'
import { FilterBar, readFilter, writeFilter, type Filter } from './filters.js'
import { emptyList, moreButton, sessionGroups } from './list.js'
import { QuestionsPanel } from './questions.js'

/** Counts and questions are fetched again this long after the last change that may move them (a burst of events costs one fetch). */
const REFRESH_DELAY_MS = 200

class Inbox {
  private readonly api = new Api(location.origin)
  private readonly el = {
    agent: byId('agent'),
    live: byId('live'),
    list: byId('list'),
    more: byId('more'),
    error: byId('error'),
  }
  private readonly toast = new Toast(byId('toast'), 3_000)
  private readonly feed: InboxFeed
  private readonly filters: FilterBar
  private readonly questions: QuestionsPanel
  private readonly cards: Cards
  private live: LiveState = 'connecting'
  private readonly refreshTimers: Partial<Record<'counts' | 'questions', ReturnType<typeof setTimeout>>> = {}

  constructor() {
    this.feed = new InboxFeed(this.api, readFilter(), {
      loaded: () => {
        this.renderAgent()
        this.renderList()
        void this.refresh('counts')
        void this.refresh('questions')
      },
      listChanged: () => this.renderList(),
      changed: (id) => {
        this.cards.flash(id)
        this.cards.rerender(id)
      },
      added: (id) => {
        this.cards.flash(id)
        this.renderList()
      },
      presence: () => this.renderAgent(),
      live: (state) => this.setLive(state),
      error: (message) => {
        this.el.error.hidden = message === undefined
        this.el.error.textContent = message ?? ''
      },
      stale: (what) => this.soon(what),
    })
    // Editor links for source locations once the server says where the project is.
    void this.api.health().then((health) => {
      setEditorBase(health)
      if (health.sourceRoot) this.renderList()
    }, () => undefined)
    this.filters = new FilterBar(byId('filters'), (f) => this.setFilter(f))
    this.questions = new QuestionsPanel(byId('questions'), (id, message) => void this.act(id, () => this.api.reply(id, message), 'Answer sent to the agent.').then(() => this.refresh('questions')))
    this.cards = new Cards(this.el.list, {
      reply: (id, message) => void this.act(id, () => this.api.reply(id, message), 'Reply sent.'),
      reopen: (id) => void this.act(id, () => this.api.reopen(id), 'Reopened: pending again.'),
      remove: (id) =>
        void this.act(
          id,
          async () => {
            await this.api.remove(id)
            this.feed.removed(id)
            this.renderList()
          },
          'Deleted.',
        ),
      get: (id) => this.feed.annotations.get(id),
      matches: (a) => this.feed.matches(a),
    })
  }

  start(): void {
    this.filters.render(this.feed.filter)
    void this.feed.reload()
    setInterval(() => this.refreshTimes(), 30_000)
    setInterval(() => void this.feed.pollHealth(), 20_000)
    window.addEventListener('popstate', () => {
      this.feed.filter = readFilter()
      this.filters.render(this.feed.filter)
      void this.feed.reload()
    })
  }

  /** Run one of the person's actions; a fresher copy it returns replaces the card's. */
  private async act(id: string, action: () => Promise<Annotation | void>, done?: string): Promise<void> {
    try {
      const updated = await action()
      if (updated) {
        this.feed.annotations.offer(updated)
        this.cards.rerender(id)
      }
      if (done) this.toast.show(done)
      this.soon('counts')
      this.soon('questions')
    } catch (e) {
      this.toast.show(describeError(e), true)
    }
  }

  private setFilter(f: Filter): void {
    if (f === this.feed.filter) return
    this.feed.filter = f
    writeFilter(f)
    this.filters.render(f)
    void this.feed.reload()
  }

  private soon(what: 'counts' | 'questions'): void {
    clearTimeout(this.refreshTimers[what])
    this.refreshTimers[what] = setTimeout(() => void this.refresh(what), REFRESH_DELAY_MS)
  }

  /** Fetch the counts per status or the open questions again (on failure, what is shown stays). */
  private async refresh(what: 'counts' | 'questions'): Promise<void> {
    if (what === 'counts') {
      const counts = await this.feed.counts()
      if (counts) this.filters.render(this.feed.filter, counts)
    } else {
      const questions = await this.feed.questions()
      if (questions) this.questions.render(questions, this.feed.sessions)
    }
  }

  private setLive(state: LiveState): void {
    this.live = state
    this.el.live.setAttribute('data-state', state)
    this.el.live.textContent = state === 'live' ? 'Live' : state === 'offline' ? 'Server unreachable — reconnecting' : 'Connecting…'
    this.renderAgent()
  }

  private renderAgent(): void {
    const state = this.live === 'offline' ? 'offline' : agentState(this.feed.presence)
    this.el.agent.setAttribute('data-state', state)
    this.el.agent.title = state === 'offline' ? "Can't reach the server." : AGENT_DETAIL[state]
    replace(this.el.agent, h('span', { class: 'dot', 'aria-hidden': 'true' }), state === 'offline' ? 'Server unreachable' : AGENT_LABEL[state])
  }

  private renderList(): void {
    const { feed } = this
    if (feed.loading && feed.annotations.size === 0) {
      replace(this.el.list, h('p', { class: 'empty' }, 'Loading…'))
      replace(this.el.more)
      return
    }
    const groups = sessionGroups(feed.annotations.all(), feed.sessions, (a) => this.cards.card(a))
    replace(this.el.list, ...(groups.length ? groups : [emptyList(feed.filter)]))
    replace(this.el.more, ...moreButton(feed.nextCursor === undefined ? undefined : feed.total - feed.annotations.size, () => void feed.loadMore()))
  }

  private refreshTimes(): void {
    for (const t of document.querySelectorAll<HTMLTimeElement>('time[datetime]')) t.textContent = timeAgo(t.dateTime)
  }
}

function byId(id: string): HTMLElement {
  const el = document.getElementById(id)
  if (!el) throw new Error(`inbox: #${id} is missing from the page`)
  return el
}

new Inbox().start()
