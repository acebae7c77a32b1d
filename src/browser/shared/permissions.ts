/**
 * An agent's permission prompts, shown to the person on the page they use (the overlay, the
 * inbox): "The agent wants to run `npm test` — Allow / Deny". The agent's `marginalia mcp` relayed
 * the prompt Claude Code shows in its terminal; the person's answer goes back through the server
 * (`POST /api/permissions/:id`, people only) and the store to that agent. The terminal keeps its
 * own prompt: whichever is answered first wins there.
 *
 * Loads the recent requests (`GET /api/permissions`), then follows them live on the stream the
 * page already has open (the overlay's page stream, the inbox's stream; see ./permission-feed.ts):
 * no connection of their own. A request
 * that expired, or that was answered elsewhere (another tab, another person), is shown as such.
 */
import { ApiError, type Api } from './api.js'
import type { PermissionFeed } from './permission-feed.js'
import type { StoreEvent } from './types.js'

type Behavior = 'allow' | 'deny'

/** A request as the server lists it. */
export interface PermissionView {
  requestId: string
  toolName: string
  description: string
  inputPreview: string
  agent?: string
  requestedAt: string
  expiresAt: string
  answer?: { behavior: Behavior; at: string }
}

/** How long an answered or expired request stays on screen before it folds away. */
const SETTLED_MS = 6_000

/** The prompts' look, for the page to adopt into the root it gives (a shadow root or the document). */
export { default as PERMISSION_CSS } from './permissions.css'

/** The command a shell tool would run, when the preview is its JSON input (`{"command":"npm test"}`). */
function commandOf(preview: string): string | undefined {
  try {
    const input = JSON.parse(preview) as unknown
    if (typeof input === 'object' && input !== null && typeof (input as { command?: unknown }).command === 'string') return (input as { command: string }).command
  } catch {
    // Not JSON (or cut short): shown as it is.
  }
  return undefined
}

export class PermissionPrompts {
  private readonly requests = new Map<string, PermissionView>()
  /** Local outcomes: what this page sent, or why sending failed. */
  private readonly notes = new Map<string, string>()
  private readonly sending = new Set<string>()
  private readonly dismissed = new Set<string>()
  private unfollow: (() => void) | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private stopped = false
  private readonly list: HTMLElement

  constructor(
    private readonly api: Api,
    /** Where the prompts are drawn (inside the page's shadow root or body). */
    container: HTMLElement,
    private readonly now: () => number = Date.now,
  ) {
    this.list = document.createElement('div')
    this.list.className = 'mg-permissions'
    this.list.setAttribute('role', 'region')
    this.list.setAttribute('aria-label', "The agent's permission requests")
    this.list.setAttribute('aria-live', 'polite')
    container.append(this.list)
  }

  /**
   * Load the requests and follow them on `feed`, the stream the page already has open (the
   * overlay's, the inbox's). A person without access (an agent's token, signed out) sees nothing.
   */
  async start(feed: PermissionFeed): Promise<void> {
    // Followed before the list is asked for: nothing said between the two is missed.
    this.unfollow = feed.follow({ event: (e) => this.onEvent(e), waiting: () => {}, reset: () => void this.reload() })
    try {
      const listed = await this.fetchJson<{ permissions: PermissionView[] }>('GET', '/api/permissions')
      for (const p of listed.permissions) this.requests.set(p.requestId, this.withKnownAnswer(p))
      // Settled before this page opened: not news.
      for (const p of listed.permissions) if (this.stateOf(p) !== 'open') this.dismissed.add(p.requestId)
    } catch {
      this.unfollow?.()
      return // not this person's to answer, or no server: nothing to show
    }
    if (this.stopped) return
    this.render()
  }

  stop(): void {
    this.stopped = true
    this.unfollow?.()
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.list.remove()
  }

  /** Open requests right now (what the page shows with buttons). */
  get open(): PermissionView[] {
    return [...this.requests.values()].filter((p) => this.stateOf(p) === 'open')
  }

  /** An answer heard on the stream while the list was on its way is kept (the list may predate it). */
  private withKnownAnswer(p: PermissionView): PermissionView {
    const known = this.requests.get(p.requestId)?.answer
    return known && !p.answer ? { ...p, answer: known } : p
  }

  private async reload(): Promise<void> {
    try {
      const listed = await this.fetchJson<{ permissions: PermissionView[] }>('GET', '/api/permissions')
      const fresh = listed.permissions.map((p) => this.withKnownAnswer(p))
      this.requests.clear()
      for (const p of fresh) this.requests.set(p.requestId, p)
      this.render()
    } catch {
      // The stream retries; the next event brings the rest.
    }
  }

  private onEvent(e: StoreEvent): void {
    if (e.type === 'permission.requested') {
      this.dismissed.delete(e.requestId)
      this.notes.delete(e.requestId)
      const { requestId, toolName, description, inputPreview, agent, expiresAt } = e
      this.requests.set(requestId, { requestId, toolName, description, inputPreview, ...(agent !== undefined ? { agent } : {}), requestedAt: e.at, expiresAt })
    } else if (e.type === 'permission.answered') {
      const p = this.requests.get(e.requestId)
      if (!p || p.answer) return
      p.answer = { behavior: e.behavior, at: e.at }
    } else return
    this.render()
  }

  private stateOf(p: PermissionView): 'open' | 'answered' | 'expired' {
    if (p.answer) return 'answered'
    return Date.parse(p.expiresAt) <= this.now() ? 'expired' : 'open'
  }

  private async answer(p: PermissionView, behavior: Behavior): Promise<void> {
    if (this.sending.has(p.requestId)) return
    this.sending.add(p.requestId)
    this.render()
    try {
      const answered = await this.fetchJson<PermissionView>('POST', `/api/permissions/${encodeURIComponent(p.requestId)}`, { behavior })
      p.answer = answered.answer ?? { behavior, at: new Date(this.now()).toISOString() }
      this.notes.set(p.requestId, behavior === 'allow' ? 'Allowed: sent to the agent.' : 'Denied: sent to the agent.')
    } catch (error) {
      // 409: answered elsewhere, or expired; 403: this session may not answer. The server says which.
      this.notes.set(p.requestId, error instanceof ApiError ? error.message : 'Could not reach Marginalia: answer in the terminal.')
      if (error instanceof ApiError && error.status === 409) void this.reload()
    } finally {
      this.sending.delete(p.requestId)
      this.render()
    }
  }

  private render(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    const now = this.now()
    const shown = [...this.requests.values()]
      .filter((p) => !this.dismissed.has(p.requestId))
      .sort((a, b) => a.requestedAt.localeCompare(b.requestedAt) || a.requestId.localeCompare(b.requestId))
    this.list.replaceChildren(...shown.map((p) => this.card(p)))
    // Wake for the next change no event announces: an expiry, a settled card folding away.
    let next = Infinity
    for (const p of shown) {
      const state = this.stateOf(p)
      if (state === 'open') next = Math.min(next, Date.parse(p.expiresAt))
      else next = Math.min(next, Math.max(now, Date.parse(p.answer?.at ?? p.expiresAt)) + SETTLED_MS)
    }
    if (next !== Infinity) {
      this.timer = setTimeout(() => {
        for (const p of this.requests.values()) {
          const state = this.stateOf(p)
          if (state !== 'open' && this.now() >= Math.max(Date.parse(p.answer?.at ?? p.expiresAt), 0) + SETTLED_MS && !this.notes.has(p.requestId)) this.dismissed.add(p.requestId)
        }
        this.render()
      }, Math.max(0, Math.min(next - now, 2 ** 31 - 1)))
    }
  }

  private card(p: PermissionView): HTMLElement {
    const state = this.stateOf(p)
    const card = document.createElement('div')
    card.className = 'mg-permission'
    card.dataset.state = state
    if (p.answer) card.dataset.behavior = p.answer.behavior
    card.dataset.requestId = p.requestId
    const who = p.agent && p.agent !== 'claude-code' ? p.agent : 'The agent'
    const what = document.createElement('p')
    what.className = 'mg-what'
    const command = commandOf(p.inputPreview)
    if (command !== undefined) {
      const code = document.createElement('code')
      code.textContent = command
      what.append(`${who} wants to run `, code)
    } else {
      const code = document.createElement('code')
      code.textContent = p.toolName
      what.append(`${who} wants to use `, code)
    }
    card.append(what)
    if (p.description) {
      const why = document.createElement('p')
      why.className = 'mg-why'
      why.textContent = p.description
      card.append(why)
    }
    if (command === undefined && p.inputPreview) {
      const pre = document.createElement('pre')
      pre.textContent = p.inputPreview
      card.append(pre)
    }
    const note = this.notes.get(p.requestId)
    if (state === 'open' && note === undefined) {
      const actions = document.createElement('div')
      actions.className = 'mg-actions'
      const busy = this.sending.has(p.requestId)
      for (const [behavior, label] of [['allow', 'Allow'], ['deny', 'Deny']] as const) {
        const button = document.createElement('button')
        button.type = 'button'
        button.className = `mg-${behavior}`
        button.textContent = label
        button.disabled = busy
        button.addEventListener('click', () => void this.answer(p, behavior))
        actions.append(button)
      }
      card.append(actions)
    } else {
      const status = document.createElement('p')
      status.className = 'mg-status'
      status.setAttribute('role', 'status')
      status.textContent =
        note ??
        (state === 'answered'
          ? `${p.answer!.behavior === 'allow' ? 'Allowed' : 'Denied'} from another page.`
          : 'Expired: answer it in the terminal, where the agent still asks.')
      card.append(status)
      const close = document.createElement('button')
      close.type = 'button'
      close.textContent = 'Dismiss'
      close.addEventListener('click', () => {
        this.dismissed.add(p.requestId)
        this.notes.delete(p.requestId)
        this.render()
      })
      const actions = document.createElement('div')
      actions.className = 'mg-actions'
      actions.append(close)
      card.append(actions)
    }
    return card
  }

  private async fetchJson<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const response = await this.api.transport(this.api.base + path, {
      method,
      headers: { ...this.api.authHeaders(), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      credentials: 'omit',
    })
    const data = (await response.json().catch(() => ({}))) as { error?: { code?: string; message?: string } }
    if (!response.ok) throw new ApiError(response.status, data.error?.code ?? 'ERROR', data.error?.message ?? `HTTP ${response.status}`)
    return data as T
  }
}
