/**
 * The inbox's webhooks panel, for admins (and local use): the endpoints with their status, a
 * disabled endpoint called out with its reason, each one's delivery log (its last attempts), and
 * adding, testing, enabling and removing one. The signing secret is shown once, right after adding.
 * Hidden for a caller the server refuses (403/401: not an admin). Refreshed while open.
 */
import { ApiError, describeError, type Api } from '../shared/api.js'
import { h, replace } from '../shared/dom.js'
import { timeAgo } from '../shared/format.js'

interface Endpoint {
  id: string
  url: string
  description?: string
  events: string[]
  status: 'active' | 'failing' | 'disabled'
  failures: number
  nextAttemptAt?: string
  disabledAt?: string
  disabledReason?: string
}

interface Attempt {
  messageId: string
  type: string
  at: string
  ok: boolean
  status?: number
  error?: string
  latencyMs: number
  attempt: number
}

export class WebhooksPanel {
  private endpoints: Endpoint[] = []
  private readonly logs = new Map<string, Attempt[]>()
  private secret: { id: string; secret: string } | undefined
  private timer: ReturnType<typeof setInterval> | undefined
  /** Opened once by itself when an endpoint is disabled, so admins see it. */
  private toldDisabled = false

  constructor(
    private readonly el: HTMLDetailsElement,
    private readonly api: Api,
    private readonly say: (message: string, error?: boolean) => void,
  ) {
    el.addEventListener('toggle', () => {
      clearInterval(this.timer)
      if (el.open) {
        void this.refresh()
        this.timer = setInterval(() => void this.refresh(), 10_000)
      }
    })
  }

  /** Load the endpoints; the panel shows only when the server lets this caller manage them. */
  async refresh(): Promise<void> {
    try {
      this.endpoints = (await this.api.call<{ endpoints: Endpoint[] }>('GET', '/api/webhooks')).endpoints
      if (this.el.open) await Promise.all(this.endpoints.map(async (e) => this.logs.set(e.id, (await this.api.call<{ attempts: Attempt[] }>('GET', `/api/webhooks/${e.id}/attempts`)).attempts)))
      this.el.hidden = false
      this.render()
    } catch (e) {
      if (e instanceof ApiError && (e.status === 401 || e.status === 403 || e.status === 404)) this.el.hidden = true
    }
  }

  private render(): void {
    const disabled = this.endpoints.filter((e) => e.status === 'disabled')
    if (disabled.length > 0 && !this.toldDisabled) {
      this.toldDisabled = true
      this.el.open = true
    }
    replace(
      this.el,
      h('summary', {}, `Webhooks (${this.endpoints.length})${disabled.length > 0 ? ` · ${disabled.length} disabled` : ''}`),
      ...disabled.map((e) => h('div', { class: 'alert', role: 'alert' }, `Disabled ${e.disabledAt ? timeAgo(e.disabledAt) : ''}: ${e.url} — ${e.disabledReason ?? ''}`)),
      ...(this.secret ? [h('div', { class: 'secret' }, `Signing secret of ${this.secret.id}, shown this once: `, h('code', {}, this.secret.secret))] : []),
      ...this.endpoints.map((e) => this.endpoint(e)),
      this.form(),
    )
  }

  private endpoint(e: Endpoint): HTMLElement {
    const log = this.logs.get(e.id) ?? []
    return h(
      'section',
      { class: 'endpoint', 'data-id': e.id },
      h(
        'header',
        {},
        h('code', {}, e.url),
        h('span', { class: 'state', 'data-state': e.status }, e.status === 'failing' ? `failing (${e.failures})` : e.status),
        e.description ? h('span', {}, e.description) : '',
        h('span', {}, e.events.length === 0 ? 'every type' : e.events.join(', ')),
        h('button', { type: 'button', onclick: () => void this.act('POST', `/api/webhooks/${e.id}/test`, 'Test message sent.') }, 'Test'),
        e.status === 'disabled' ? h('button', { type: 'button', onclick: () => void this.act('POST', `/api/webhooks/${e.id}/enable`, 'Enabled: delivery resumes.') }, 'Enable') : '',
        h('button', { type: 'button', onclick: () => void this.act('DELETE', `/api/webhooks/${e.id}`, 'Removed.') }, 'Remove'),
      ),
      log.length === 0
        ? h('p', {}, 'No attempts yet.')
        : h(
            'table',
            { 'aria-label': `Delivery log of ${e.url}` },
            h('tr', {}, h('th', {}, 'when'), h('th', {}, 'type'), h('th', {}, 'try'), h('th', {}, 'result'), h('th', {}, 'latency')),
            ...log.slice(0, 10).map((a) => h('tr', { 'data-ok': String(a.ok) }, h('td', {}, timeAgo(a.at)), h('td', {}, a.type), h('td', {}, String(a.attempt)), h('td', {}, a.ok ? `${a.status}` : (a.error ?? `${a.status}`)), h('td', {}, `${a.latencyMs} ms`))),
          ),
    )
  }

  private form(): HTMLElement {
    const url = h('input', { type: 'url', name: 'url', placeholder: 'https://hooks.example.com/marginalia', 'aria-label': 'Endpoint URL', required: true })
    const description = h('input', { type: 'text', name: 'description', placeholder: 'What it is for (optional)', 'aria-label': 'Description' })
    return h(
      'form',
      {
        onsubmit: (ev: Event) => {
          ev.preventDefault()
          void this.add(url.value, description.value)
        },
      },
      url,
      description,
      h('button', { type: 'submit' }, 'Add endpoint'),
    )
  }

  private async add(url: string, description: string): Promise<void> {
    try {
      const added = await this.api.call<{ endpoint: Endpoint; secret: string }>('POST', '/api/webhooks', { url, ...(description.trim() ? { description } : {}) })
      this.secret = { id: added.endpoint.id, secret: added.secret }
      await this.refresh()
    } catch (e) {
      this.say(describeError(e), true)
    }
  }

  private async act(method: string, path: string, done: string): Promise<void> {
    try {
      const answer = await this.api.call<{ attempt?: Attempt }>(method, path)
      if (answer.attempt && !answer.attempt.ok) this.say(`Test failed: ${answer.attempt.error ?? answer.attempt.status}`, true)
      else this.say(done)
      this.secret = undefined
      await this.refresh()
    } catch (e) {
      this.say(describeError(e), true)
    }
  }
}
