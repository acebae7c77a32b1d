/**
 * One session per page (origin + pathname), remembered in localStorage per server. A page with
 * no remembered session looks for one with its URL on the server (another browser may have made
 * it) and otherwise creates one when the first annotation is sent.
 */
import { clip } from '../../shared/format.js'
import { ApiError, type Api } from '../../shared/api.js'
import { LIMITS } from '../../../store/vocabulary.js'
import type { Session } from '../../shared/types.js'
import type { SessionResolver } from './outbox.js'

export class PageSessions implements SessionResolver {
  private readonly memory = new Map<string, string>()
  private readonly creating = new Map<string, Promise<string>>()

  constructor(
    private readonly api: Api,
    private readonly storage: Storage | undefined,
    private readonly prefix: string,
    /** Called when a session id becomes known for a page (found or created). */
    private readonly onSession: (pageKey: string, session: Session | string) => void = () => {},
  ) {}

  private key(pageKey: string): string {
    return `${this.prefix}${pageKey}`
  }

  stored(pageKey: string): string | undefined {
    try {
      return this.storage?.getItem(this.key(pageKey)) ?? this.memory.get(pageKey)
    } catch {
      return this.memory.get(pageKey)
    }
  }

  remember(pageKey: string, id: string): void {
    this.memory.set(pageKey, id)
    try {
      this.storage?.setItem(this.key(pageKey), id)
    } catch {
      // memory only
    }
  }

  forget(pageKey: string): void {
    this.memory.delete(pageKey)
    try {
      this.storage?.removeItem(this.key(pageKey))
    } catch {
      // memory only
    }
  }

  /**
   * The newest session on the server for this page, if any: the server lists this page's sessions
   * (`?url=`), so what a page downloads does not grow with the store's other pages. A server from
   * before that filter (the extension meets any version) answers 400: then every session is read.
   */
  async find(pageKey: string): Promise<Session | undefined> {
    let sessions: Session[]
    try {
      sessions = await this.api.allSessions(5_000, pageKey)
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 400)) throw e
      sessions = await this.api.allSessions(5_000)
    }
    for (let i = sessions.length - 1; i >= 0; i--) if (sessions[i]!.url === pageKey) return sessions[i]
    return undefined
  }

  async ensure(pageKey: string, title?: string): Promise<string> {
    const known = this.stored(pageKey)
    if (known !== undefined) return known
    let pending = this.creating.get(pageKey)
    if (!pending) {
      pending = (async () => {
        const found = await this.find(pageKey)
        const session = found ?? (await this.api.createSession(clip(pageKey, LIMITS.url), title ? clip(title, LIMITS.name) : undefined))
        this.remember(pageKey, session.id)
        this.onSession(pageKey, session)
        return session.id
      })().finally(() => this.creating.delete(pageKey))
      this.creating.set(pageKey, pending)
    }
    return pending
  }
}
