/**
 * A signed-in person's session token in the browser, kept in this origin's own
 * storage: the app's origin for the overlay (handed over by the server's sign-in popup through
 * postMessage), the server's origin for the inbox (written by the sign-in page). No cookies: the
 * token goes out only as `Authorization: Bearer` on our own requests.
 */
export interface SignedIn {
  token: string
  name: string
  id: string
  expiresAt: string
}

/** The storage key the server's sign-in page writes on its own origin (the inbox reads it there). */
export const SERVER_SESSION_KEY = 'marginalia.session'

/** A person's session as the overlay's requests and its sign-in need it (the extension keeps its own). */
export interface Auth {
  readonly current: SignedIn | undefined
  set(session: SignedIn): void
  clear(): void
  headers(): Record<string, string>
  onChange(listener: () => void): () => void
}

export class BrowserAuth implements Auth {
  private readonly listeners = new Set<() => void>()

  constructor(private readonly key: string) {}

  /** The stored session, unless it has expired. */
  get current(): SignedIn | undefined {
    let s: SignedIn | undefined
    try {
      s = JSON.parse(localStorage.getItem(this.key) ?? 'null') as SignedIn | undefined
    } catch {
      s = undefined
    }
    if (!s || typeof s.token !== 'string') return undefined
    if (typeof s.expiresAt === 'string' && Date.parse(s.expiresAt) <= Date.now()) return undefined
    return s
  }

  set(session: SignedIn): void {
    try {
      localStorage.setItem(this.key, JSON.stringify(session))
    } catch {
      // storage refused (private mode): the session lasts as long as nothing needs it again
    }
    this.notify()
  }

  clear(): void {
    try {
      localStorage.removeItem(this.key)
    } catch {
      // nothing kept
    }
    this.notify()
  }

  headers(): Record<string, string> {
    const s = this.current
    return s ? { Authorization: `Bearer ${s.token}` } : {}
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private notify(): void {
    for (const l of [...this.listeners]) l()
  }
}
