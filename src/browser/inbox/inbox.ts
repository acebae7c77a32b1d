/**
 * The inbox page (served at `/`): a triage list of every annotation, newest open ones first by
 * default, kept live over Server-Sent Events. The person searches comments and replies, filters by
 * status, page, intent, severity, reply author, who wrote it and which agent replied,
 * selects annotations and resolves, dismisses, reopens, archives, deletes or copies them as
 * Markdown at once — and replies (with pasted images), reopens and deletes one by one.
 * Annotations load a page at a time (limit/cursor); the totals per status and per page come from
 * the server.
 *
 * This is the page's controller: the feed holds the data, the tabs, toolbar, selection bar, the
 * questions panel and the cards draw it, and the controller wires them and runs the actions.
 */
import { BrowserAuth, SERVER_SESSION_KEY } from '../shared/auth.js'
import type { Links } from '../shared/links.js'
import { Api, ApiError, describeError } from '../shared/api.js'
import { h, replace } from '../shared/dom.js'
import { AGENT_DETAIL, AGENT_LABEL, agentState, shortUrl, timeAgo } from '../shared/format.js'
import { annotationsToMarkdown } from '../shared/markdown.js'
import { Toast } from '../shared/toast.js'
import type { Annotation, BulkAction } from '../shared/types.js'
import { BulkBar } from './bulk.js'
import { Cards } from './cards.js'
import { mountConnect } from './connect.js'
import { InboxFeed, type LiveState } from './feed.js'
import { mountInboxPermissions } from './permission.js'
import { StatusTabs, Toolbar, readView, writeView, type View } from './filters.js'
import { emptyList, moreButton, sessionGroups } from './list.js'
import { QuestionsPanel } from './questions.js'
import { WebhooksPanel } from './webhooks.js'

const DONE: Record<BulkAction, string> = { resolve: 'Resolved', dismiss: 'Dismissed', reopen: 'Reopened', archive: 'Archived', delete: 'Deleted' }

class Inbox {
  private readonly api = new Api(location.origin, 10_000, new BrowserAuth(SERVER_SESSION_KEY))
  /** Where images and source links point: this server (same origin); the editor once /health answers. */
  private readonly links: Links = { attachments: '', editor: {} }
  private readonly el = {
    agent: byId('agent'),
    live: byId('live'),
    list: byId('list'),
    more: byId('more'),
    error: byId('error'),
  }
  private readonly toast = new Toast(byId('toast'), 3_000)
  private readonly feed: InboxFeed
  private readonly tabs: StatusTabs
  private readonly toolbar: Toolbar
  private readonly bulk: BulkBar
  private readonly questions: QuestionsPanel
  private readonly cards: Cards
  private readonly webhooks = new WebhooksPanel(byId('webhooks') as HTMLDetailsElement, this.api, (message, error) => this.toast.show(message, error))
  private readonly selection = new Set<string>()
  private busy = false
  /** GET /api/identities answered 403 (a person who is not an admin): the filters learn names from the data only. */
  private identitiesForbidden = false
  private live: LiveState = 'connecting'

  constructor() {
    this.feed = new InboxFeed(this.api, readView(), {
      loaded: () => {
        this.renderAgent()
        this.renderList()
        this.renderTotals()
        void this.refreshQuestions()
        void this.refreshIdentities()
        void this.webhooks.refresh()
      },
      listChanged: () => this.renderList(),
      changed: (id) => {
        this.cards.flash(id)
        this.cards.rerender(id)
      },
      totals: () => this.renderTotals(),
      presence: () => this.renderAgent(),
      live: (state) => this.setLive(state),
      error: (message) => {
        // The live chip already says the server is unreachable: the banner only for other failures.
        const unreachable = message !== undefined && message.startsWith("Can't reach")
        this.el.error.hidden = message === undefined || unreachable
        this.el.error.textContent = unreachable ? '' : (message ?? '')
      },
      stale: () => void this.refreshQuestions(),
      roster: () => this.toolbar.render(this.feed.view, this.feed.sessions, this.feed.roster),
    })
    // Editor links for source locations once the server says where the project is; the install links once it says where its MCP endpoint is.
    const health = this.api.health()
    mountConnect(byId('connect'), health, copyText)
    void health.then((health) => {
      this.links.editor = health
      if (health.sourceRoot) this.renderList()
    }, () => undefined)
    this.tabs = new StatusTabs(byId('filters'), (status) => this.setView({ status }))
    this.toolbar = new Toolbar(byId('toolbar'), (patch) => this.setView(patch))
    this.bulk = new BulkBar(byId('bulk'), {
      run: (action) => void this.runBulk(action),
      copy: () => void this.copy([...this.selection], 'Copied the selection as Markdown.'),
      selectAll: () => {
        for (const a of this.feed.annotations.all()) this.selection.add(a.id)
        this.syncSelection()
      },
      clear: () => {
        const first = this.selection.values().next().value
        this.selection.clear()
        this.syncSelection()
        if (first !== undefined) this.cards.element(first)?.querySelector<HTMLElement>('[data-action="select"]')?.focus()
      },
    })
    this.questions = new QuestionsPanel(byId('questions'), (id, message) => void this.act(id, () => this.api.reply(id, message), 'Answer sent to the agent.').then(() => this.refreshQuestions()))
    this.cards = new Cards(this.el.list, {
      reply: async (id, message, images) => {
        try {
          const attachments = images.length > 0 ? await Promise.all(images.map((f) => this.api.upload(f, 'image'))) : undefined
          const updated = await this.api.reply(id, message, attachments)
          this.feed.annotations.offer(updated)
          this.toast.show('Reply sent.')
          void this.refreshQuestions()
        } catch (e) {
          this.toast.show(describeError(e), true)
          throw e
        }
      },
      reopen: (id) => void this.act(id, () => this.api.reopen(id), 'Reopened: pending again.'),
      remove: (id) =>
        void this.act(
          id,
          async () => {
            const next = this.neighbour([id])
            await this.api.remove(id)
            this.forget([id])
            this.renderList()
            this.focusCard(next)
          },
          'Deleted.',
        ),
      copy: (id) => void this.copy([id], 'Copied as Markdown.'),
      select: (id, on) => {
        if (on) this.selection.add(id)
        else this.selection.delete(id)
        this.syncSelection()
      },
      selected: (id) => this.selection.has(id),
      isNew: (id) => this.feed.fresh.has(id),
      seen: (id) => {
        if (!this.feed.fresh.delete(id)) return
        const card = this.cards.element(id)
        card?.classList.remove('new')
        card?.querySelector('.new-tag')?.remove()
      },
      get: (id) => this.feed.annotations.get(id),
      matches: (a) => this.feed.matches(a),
      refused: (message) => this.toast.show(message, true),
    }, this.links)
  }

  start(): void {
    this.tabs.render(this.feed.view.status)
    this.toolbar.render(this.feed.view, this.feed.sessions, this.feed.roster)
    void this.feed.reload()
    mountInboxPermissions(this.api, this.feed.permissionFeed)
    setInterval(() => this.refreshTimes(), 30_000)
    setInterval(() => void this.feed.pollHealth(), 20_000)
    window.addEventListener('popstate', () => {
      this.feed.view = readView()
      this.afterViewChange()
    })
  }

  private setView(patch: Partial<View>): void {
    const next = { ...this.feed.view, ...patch }
    if ((Object.keys(next) as (keyof View)[]).every((k) => next[k] === this.feed.view[k])) return
    this.feed.view = next
    writeView(next)
    this.afterViewChange()
  }

  private afterViewChange(): void {
    this.selection.clear()
    this.syncSelection()
    this.tabs.render(this.feed.view.status)
    this.toolbar.render(this.feed.view, this.feed.sessions, this.feed.roster)
    void this.feed.reload()
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
      this.feed.refreshTotals()
      void this.refreshQuestions()
    } catch (e) {
      this.toast.show(describeError(e), true)
    }
  }

  /** One action on the selection. Cards that stay keep their place (dimmed if they left the view); focus stays on the pressed button or, when the bar goes, on the card after the last removed one. */
  private async runBulk(action: BulkAction): Promise<void> {
    const ids = [...this.selection]
    if (ids.length === 0 || this.busy) return
    this.busy = true
    this.syncSelection()
    try {
      const next = this.neighbour(ids)
      const result = await this.api.bulk(action, ids)
      if (action === 'delete' || action === 'archive') {
        this.forget(result.done)
        this.renderList()
      } else {
        // The live events bring the new copies; fetch them now so the cards change at once.
        await Promise.all(result.done.map(async (id) => this.feed.annotations.offer(await this.api.annotation(id)) && this.cards.rerender(id)))
      }
      const failed = result.failed.length
      this.toast.show(`${DONE[action]} ${result.done.length}.${failed > 0 ? ` ${failed} not: ${result.failed[0]!.message}` : ''}`, failed > 0)
      this.busy = false
      this.syncSelection()
      if (this.selection.size === 0) this.focusCard(next)
      this.feed.refreshTotals()
      void this.refreshQuestions()
    } catch (e) {
      this.busy = false
      this.syncSelection()
      this.toast.show(describeError(e), true)
    }
  }

  private async copy(ids: readonly string[], done: string): Promise<void> {
    const list = ids.map((id) => this.feed.annotations.get(id)).filter((a): a is Annotation => a !== undefined)
    const pages = new Set(list.map((a) => a.sessionId))
    const only = pages.size === 1 ? this.feed.sessions.get([...pages][0]!) : undefined
    const ok = await copyText(annotationsToMarkdown(list, { title: only ? `Annotations on ${shortUrl(only.url)}` : `Annotations (${list.length})` }))
    this.toast.show(ok ? done : "Can't write to the clipboard here: select the text in a card and copy it.", !ok)
  }

  /** Drop annotations that are gone (deleted, archived) from the feed and the selection. */
  private forget(ids: readonly string[]): void {
    for (const id of ids) this.selection.delete(id)
    this.feed.removed(ids)
  }

  /** The id of the first card (as shown) after the last of `ids` that is not one of them (else the one before). */
  private neighbour(ids: readonly string[]): string | undefined {
    const order = [...this.el.list.querySelectorAll<HTMLElement>('article.card')].map((c) => c.dataset.id ?? '')
    const gone = new Set(ids)
    const last = Math.max(...ids.map((id) => order.indexOf(id)))
    return order.slice(last + 1).find((id) => !gone.has(id)) ?? [...order.slice(0, last)].reverse().find((id) => !gone.has(id))
  }

  private focusCard(id: string | undefined): void {
    if (id !== undefined) this.cards.element(id)?.querySelector<HTMLElement>('[data-action="select"]')?.focus()
  }

  private syncSelection(): void {
    for (const id of [...this.selection]) if (!this.feed.annotations.get(id)) this.selection.delete(id)
    for (const card of this.el.list.querySelectorAll<HTMLElement>('article.card')) {
      const on = this.selection.has(card.dataset.id ?? '')
      card.classList.toggle('selected', on)
      const box = card.querySelector<HTMLInputElement>('input.pick')
      if (box) box.checked = on
    }
    this.bulk.render(this.selection.size, this.feed.annotations.size, this.busy)
  }

  /** Everyone the store knows, for the people and agent filters, when this caller may read the list (else the data names them). */
  private async refreshIdentities(): Promise<void> {
    if (this.identitiesForbidden) return
    try {
      const { identities } = await this.api.identities()
      let changed = false
      for (const i of identities) changed = this.feed.roster.add({ id: i.id, name: i.name, kind: i.kind, revoked: i.revokedAt !== undefined }) || changed
      if (changed) this.toolbar.render(this.feed.view, this.feed.sessions, this.feed.roster)
    } catch (e) {
      if (e instanceof ApiError && (e.status === 403 || e.status === 401)) this.identitiesForbidden = true
    }
  }

  private async refreshQuestions(): Promise<void> {
    const questions = await this.feed.questions()
    if (questions) this.questions.render(questions, this.feed.sessions)
  }

  private setLive(state: LiveState): void {
    this.live = state
    this.el.live.setAttribute('data-state', state)
    if (state === 'offline') replace(this.el.live, 'Server unreachable', h('span', { class: 'extra' }, ' — reconnecting'))
    else this.el.live.textContent = state === 'live' ? 'Live' : 'Connecting…'
    this.renderAgent()
  }

  /** The agent chip; hidden while the server is unreachable (the live chip says so, once). */
  private renderAgent(): void {
    const state = agentState(this.feed.presence)
    this.el.agent.hidden = this.live === 'offline'
    this.el.agent.setAttribute('data-state', state)
    this.el.agent.title = AGENT_DETAIL[state]
    replace(this.el.agent, h('span', { class: 'dot', 'aria-hidden': 'true' }), h('span', { class: 'agent-label' }, AGENT_LABEL[state]))
  }

  private renderTotals(): void {
    const { feed } = this
    this.tabs.render(feed.view.status, feed.statusTotals)
    this.toolbar.render(feed.view, feed.sessions, feed.roster)
    for (const el of this.el.list.querySelectorAll<HTMLElement>('section.session')) {
      const total = el.querySelector<HTMLElement>('.group-total')
      const n = feed.sessionTotals[el.dataset.session ?? '']
      if (total && n !== undefined && String(n) !== total.dataset.total) {
        total.dataset.total = String(n)
        total.textContent = `${n} annotation${n === 1 ? '' : 's'}`
      }
    }
    this.renderMore()
  }

  private renderList(): void {
    const { feed } = this
    if (feed.loading && feed.annotations.size === 0) {
      replace(this.el.list, h('p', { class: 'empty' }, 'Loading…'))
      replace(this.el.more)
      return
    }
    // Keep the keyboard focus where it was (same card, same control) across the redraw.
    const active = document.activeElement instanceof HTMLElement && this.el.list.contains(document.activeElement) ? document.activeElement : undefined
    const focusCard = active?.closest<HTMLElement>('article.card')?.dataset.id
    const focusAction = active?.dataset.action
    const groups = sessionGroups(feed.ordered(), feed.sessions, feed.sessionTotals, (a) => this.cards.card(a))
    const nothing = feed.statusTotals === undefined || Object.values(feed.statusTotals).every((n) => n === 0)
    replace(this.el.list, ...(groups.length ? groups : [emptyList(feed.view, nothing)]))
    if (focusCard !== undefined) {
      const card = this.cards.element(focusCard)
      ;(card?.querySelector<HTMLElement>(`[data-action="${focusAction ?? ''}"]`) ?? card)?.focus()
    }
    this.renderMore()
    this.syncSelection()
  }

  private renderMore(): void {
    const { feed } = this
    if (feed.loading && feed.annotations.size === 0) return
    const focused = document.activeElement instanceof HTMLElement && this.el.more.contains(document.activeElement)
    replace(this.el.more, ...moreButton(feed.nextCursor === undefined ? undefined : feed.total - feed.annotations.size, feed.view, () => void feed.loadMore()))
    if (focused) this.el.more.querySelector<HTMLElement>('button')?.focus()
  }

  private refreshTimes(): void {
    for (const t of document.querySelectorAll<HTMLTimeElement>('time[datetime]')) t.textContent = timeAgo(t.dateTime)
  }
}

/** Put `text` on the clipboard: the Clipboard API, else (a plain-http address other than localhost, or no permission) the old way. */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    return copyByCommand(text)
  }
}

/** Copy through a hidden text box and `execCommand('copy')`; the keyboard focus returns where it was. */
function copyByCommand(text: string): boolean {
  const back = document.activeElement instanceof HTMLElement ? document.activeElement : undefined
  const box = h('textarea', { readonly: true, style: 'position:fixed;top:0;left:-9999px;opacity:0', 'aria-hidden': 'true' })
  box.value = text
  document.body.append(box)
  box.select()
  let ok = false
  try {
    ok = document.execCommand('copy')
  } catch {
    ok = false
  }
  box.remove()
  back?.focus()
  return ok
}

function byId(id: string): HTMLElement {
  const el = document.getElementById(id)
  if (!el) throw new Error(`inbox: #${id} is missing from the page`)
  return el
}

new Inbox().start()
