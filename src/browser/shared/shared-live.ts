/**
 * One live connection for every tab of the app. A browser keeps at most six HTTP/1.1 connections
 * to one server, shared by all the tabs of a site; a live stream per tab would leave the seventh
 * tab's overlay — and every request it makes — waiting for one to close.
 *
 * Each tab asks for the same Web Lock (one per server). The tab that holds it leads: it reads the
 * server's stream of every event (`/api/events?permissions=1`) and says each frame to the other
 * tabs on a BroadcastChannel; the others hear them there. Every tab hands its own subscriber what
 * it heard, from its own rev on. When the leading tab closes, its lock goes to the next tab,
 * which resumes the stream from the newest rev any tab heard: nothing is missed and nothing
 * arrives twice (a subscriber skips what it has).
 *
 * A tab hears the channel from the moment it starts, before it loads its annotations: whatever
 * it loads reflects the server at some rev, and every event after that rev is said on the channel
 * after it started listening, so it is among what the tab keeps (the last `KEPT` events). A
 * subscriber opened from a rev older than what is kept is told to refetch (`reset`).
 */
import type { Api, Transport } from './api.js'
import { LiveStream, type LiveHandlers, type LiveOptions } from './live.js'
import type { Presence, StoreEvent } from './types.js'

/** A subscriber's hold on the live events: where it is, a nudge to reconnect now, and its end. */
export interface LiveLink {
  readonly rev: number
  retryNow(): void
  close(): void
}

/**
 * What the tabs say to each other, kept short (it is in the script every page loads): `[TAG, kind, …]`
 * — `e` an event, `r` a reset, `p` the agent's presence, `o` connected, `d` the connection dropped,
 * `x` a frame of the stream's own (its SSE name, its data), `n` a nudge to reconnect now (the
 * network or the server is back), `q` a tab that came later asks how the connection is (the
 * leading tab says `o` or `d` and `p` again). Anything else on the channel is ignored.
 */
type Said = readonly [typeof TAG, 'e', StoreEvent] | readonly [typeof TAG, 'r' | 'o' | 'd' | 'n' | 'q'] | readonly [typeof TAG, 'p', Presence] | readonly [typeof TAG, 'x', string, string]
const TAG = 'marginalia-live'

function isSaid(value: unknown): value is Said {
  if (!Array.isArray(value) || value[0] !== TAG) return false
  const [, kind, a, b] = value as unknown[]
  if (kind === 'e') return typeof a === 'object' && a !== null && typeof (a as StoreEvent).type === 'string' && typeof (a as StoreEvent).rev === 'number'
  if (kind === 'x') return typeof a === 'string' && typeof b === 'string'
  if (kind === 'p') return typeof a === 'object' && a !== null
  return kind === 'r' || kind === 'o' || kind === 'd' || kind === 'n' || kind === 'q'
}

/** Events kept for a subscriber opened from an older rev than the newest heard. */
const KEPT = 500

interface Subscriber {
  rev: number
  readonly handlers: LiveHandlers
}

export interface SharedLiveOptions extends LiveOptions {
  /** The browser's lock manager (`navigator.locks`). */
  locks: LockManager
  /** The channel the tabs of this site share for this server. */
  channel: BroadcastChannel
  /** The lock's name: one per server. */
  lockName: string
}

export class SharedLive {
  private readonly subscribers = new Set<Subscriber>()
  private readonly kept: StoreEvent[] = []
  /** Events up to this rev may have been dropped from `kept` (undefined: none was). */
  private keptAfter: number | undefined
  /** The newest rev heard (this tab's stream or another's): where a new leader resumes. */
  private heardRev: number | undefined
  private stream: LiveStream | undefined
  private asked = false
  private closed = false
  private release: (() => void) | undefined
  /** How the connection is, as last heard (`o` connected, `d` dropped), and the agent's presence: told to a subscriber that comes later. */
  private state: 'o' | 'd' | undefined
  private presence: Presence | undefined

  constructor(
    /** The stream of every event, as this server serves it (`…/api/events?permissions=1`). */
    private readonly url: string,
    private readonly options: SharedLiveOptions,
  ) {
    options.channel.addEventListener('message', this.onMessage)
  }

  /** Whether this tab holds the connection now. */
  get leading(): boolean {
    return this.stream !== undefined
  }

  /** Follow the live events after `rev`; the first subscriber makes this tab ask to lead. */
  open(rev: number, handlers: LiveHandlers): LiveLink {
    const sub: Subscriber = { rev, handlers }
    this.subscribers.add(sub)
    if (this.keptAfter !== undefined && this.keptAfter > rev) {
      // What it missed is no longer kept: it refetches, and goes on from the newest heard.
      sub.rev = this.heardRev ?? rev
      queueMicrotask(() => this.subscribers.has(sub) && handlers.reset())
    } else {
      const missed = this.kept.filter((e) => e.rev > rev)
      if (missed.length > 0) queueMicrotask(() => { for (const e of missed) this.deliver(sub, e) })
    }
    // How the connection is: told at once when known, else asked of the tab that leads.
    if (this.state !== undefined || this.presence !== undefined) queueMicrotask(() => this.tell(sub))
    else if (!this.leading) this.say([TAG, 'q'])
    this.lead(rev)
    return {
      get rev() {
        return sub.rev
      },
      retryNow: () => {
        if (this.stream) this.stream.retryNow()
        else this.say([TAG, 'n'])
      },
      close: () => void this.subscribers.delete(sub),
    }
  }

  /** The tab is going: the lock goes to the next tab, which resumes the stream. */
  close(): void {
    this.closed = true
    this.stream?.close()
    this.stream = undefined
    this.release?.()
    this.options.channel.removeEventListener('message', this.onMessage)
    this.options.channel.close()
    this.subscribers.clear()
  }

  private lead(rev: number): void {
    if (this.asked || this.closed) return
    this.asked = true
    void this.options.locks
      .request(this.options.lockName, () => {
        if (this.closed) return undefined
        // Held until the tab closes (or `close`): then the next tab in line leads.
        const held = new Promise<void>((resolve) => (this.release = resolve))
        const from = this.heardRev ?? Math.min(rev, ...[...this.subscribers].map((s) => s.rev))
        this.stream = new LiveStream(this.url, from, {
          event: (event) => this.hear([TAG, 'e', event]),
          reset: () => this.hear([TAG, 'r']),
          presence: (presence) => this.hear([TAG, 'p', presence]),
          open: () => this.hear([TAG, 'o']),
          down: () => this.hear([TAG, 'd']),
          other: (type, data) => this.hear([TAG, 'x', type, data]),
        }, this.options)
        return held
      })
      .catch(() => {
        // No lock (the page went away first): nothing to lead.
      })
  }

  /** A frame this tab's stream read: said to the other tabs, and handed to this tab's subscribers. */
  private hear(said: Said): void {
    this.say(said)
    this.take(said)
  }

  private say(said: Said): void {
    try {
      this.options.channel.postMessage(said)
    } catch {
      // A closed channel: this tab is going anyway.
    }
  }

  private readonly onMessage = (m: MessageEvent): void => {
    const said: unknown = m.data
    if (isSaid(said)) this.take(said)
  }

  private take(said: Said): void {
    const subs = [...this.subscribers]
    if (said[1] === 'e') {
      const event = said[2]
      if (this.heardRev !== undefined && event.rev <= this.heardRev) return
      this.heardRev = event.rev
      this.kept.push(event)
      if (this.kept.length > KEPT) this.keptAfter = this.kept.shift()!.rev
      for (const sub of subs) this.deliver(sub, event)
    } else if (said[1] === 'n') this.stream?.retryNow()
    else if (said[1] === 'q') {
      // Another tab asks how the connection is: the leading tab says it again.
      if (!this.stream) return
      if (this.state) this.say([TAG, this.state])
      if (this.presence) this.say([TAG, 'p', this.presence])
    } else if (said[1] === 'p') {
      this.presence = said[2]
      for (const sub of subs) sub.handlers.presence(said[2])
    }
    else if (said[1] === 'x') for (const sub of subs) sub.handlers.other?.(said[2], said[3])
    else {
      if (said[1] !== 'r') this.state = said[1]
      for (const sub of subs) sub.handlers[said[1] === 'r' ? 'reset' : said[1] === 'o' ? 'open' : 'down']()
    }
  }

  /** What a subscriber that came later is told: the connection's state and the agent's presence as last heard. */
  private tell(sub: Subscriber): void {
    if (!this.subscribers.has(sub)) return
    if (this.state === 'o') sub.handlers.open()
    else if (this.state === 'd') sub.handlers.down()
    if (this.presence) sub.handlers.presence(this.presence)
  }

  private deliver(sub: Subscriber, event: StoreEvent): void {
    if (event.rev <= sub.rev || !this.subscribers.has(sub)) return
    sub.rev = event.rev
    sub.handlers.event(event)
  }
}

/**
 * The connection this page shares with the app's other tabs for `server`, or undefined where it
 * keeps one of its own: a browser without Web Locks (a page not served from a secure origin —
 * localhost is one — has none) or BroadcastChannel, and the extension, whose requests go through
 * its own service worker (`transport`) and whose page scripts are not to be heard.
 */
export function sharedLive(server: string, api: Api, transport: Transport | undefined): SharedLive | undefined {
  if (transport !== undefined || typeof BroadcastChannel !== 'function' || typeof navigator === 'undefined' || !navigator.locks) return undefined
  const name = `marginalia-live:${server}`
  return new SharedLive(`${api.base}/api/events?permissions=1`, { locks: navigator.locks, channel: new BroadcastChannel(name), lockName: name, headers: () => api.authHeaders() })
}
