/**
 * Signing in to a team server from the app's own site: the server's sign-in popup hands
 * a session token for this exact origin back by postMessage; signing out forgets it here and ends
 * it on the server. Whether sign-in is offered at all, the server's /health says (the page sync asks it).
 */
import type { Api } from '../../shared/api.js'
import type { Auth } from '../../shared/auth.js'
import type { Health } from '../../shared/types.js'

export interface SignInHooks {
  /** One line for the person (the dock's status). */
  say(text: string): void
  /** Show "Sign in" (when `needed`) or "Signed in as `name` · Sign out". */
  render(needed: boolean, name: string | undefined): void
  /** Signed in: start over as that person (reload the page's annotations, follow live events, send what waits). */
  restart(): void
  /** Signed out: stop following live events. */
  stop(): void
}

export class SignIn {
  /** Whether the server asks people to sign in. */
  private needed = false

  constructor(
    private readonly server: string,
    private readonly api: Api,
    private readonly auth: Auth,
    private readonly hooks: SignInHooks,
    /** Where "Sign in" leads instead of the server's popup (the extension signs in from its own page). */
    private readonly openElsewhere?: () => void,
  ) {
    auth.onChange(() => this.render())
  }

  /** Listen for the popup's answer. */
  start(signal: AbortSignal): void {
    window.addEventListener('message', this.onMessage, { signal })
  }

  /** The server's /health (the page sync asks it): whether sign-in is needed. */
  heard(health: Health): void {
    this.needed = health.signIn === true
    this.render()
  }

  /** The server's sign-in popup (a window the person sees, on the server's origin). */
  open(): void {
    if (this.openElsewhere) return this.openElsewhere()
    const url = `${this.server}/auth/popup?origin=${encodeURIComponent(location.origin)}`
    const popup = window.open(url, 'marginalia-sign-in', 'popup,width=480,height=400')
    if (!popup) this.hooks.say('The sign-in window was blocked: allow pop-ups for this page and try again.')
  }

  async signOut(): Promise<void> {
    const headers = this.api.authHeaders()
    this.auth.clear()
    this.hooks.stop()
    this.hooks.say('Signed out.')
    try {
      await this.api.transport(`${this.server}/auth/sign-out`, { method: 'POST', headers, credentials: 'omit' })
    } catch {
      // the token is gone from this browser either way
    }
  }

  private render(): void {
    this.hooks.render(this.needed, this.auth.current?.name)
  }

  private readonly onMessage = (e: MessageEvent): void => {
    if (e.origin !== new URL(this.server).origin) return // only the server's own page may sign us in
    const data = e.data as { type?: unknown; token?: unknown; expiresAt?: unknown; identity?: { id?: unknown; name?: unknown } } | null
    if (!data || data.type !== 'marginalia:session' || typeof data.token !== 'string' || typeof data.identity?.name !== 'string') return
    this.auth.set({ token: data.token, expiresAt: String(data.expiresAt), name: data.identity.name, id: String(data.identity.id) })
    this.hooks.say(`Signed in as ${data.identity.name}.`)
    this.hooks.restart()
  }
}
