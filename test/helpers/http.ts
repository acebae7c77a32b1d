import { request as httpRequest, type Agent, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { startHttpServer, type HttpServer, type HttpServerOptions, type Store } from '../../src/index.js'
import { addPerson } from '../../src/auth/identities.js'
import { type Cleanups } from './cleanup.js'

export interface Reply {
  status: number
  headers: IncomingHttpHeaders
  text: string
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: any // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
}

export interface RequestOptions {
  method?: string
  headers?: Record<string, string | number>
  /** An object is sent as JSON with `Content-Type: application/json` unless headers say otherwise. */
  body?: unknown
  timeoutMs?: number
  /** The connection pool (default: node's global agent). */
  agent?: Agent
}

/** One HTTP request with node:http (which, unlike fetch, lets a test set Host and Origin). */
export function request(url: string, options: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string | number> = { ...options.headers }
  let payload: Buffer | undefined
  if (options.body !== undefined) {
    if (typeof options.body === 'string' || Buffer.isBuffer(options.body)) payload = Buffer.from(options.body)
    else {
      payload = Buffer.from(JSON.stringify(options.body))
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json'
    }
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) headers['Content-Length'] = payload.length
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers, timeout: options.timeoutMs ?? 5_000, ...(options.agent ? { agent: options.agent } : {}) }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
      })
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`request to ${url} timed out`)))
    req.on('error', reject)
    req.end(payload)
  })
}

export interface SseEvent {
  id?: string
  event: string
  data: string
}

/** A minimal SSE client over node:http: collects events and lets a test wait for them. */
export class SseClient {
  readonly events: SseEvent[] = []
  readonly comments: string[] = []
  status = 0
  headers: IncomingHttpHeaders = {}
  ended = false
  private response: IncomingMessage | undefined
  private buffer = ''
  private waiters: (() => void)[] = []
  private readonly req: ReturnType<typeof httpRequest>

  private constructor(url: string, headers: Record<string, string>, onResponse: (c: SseClient) => void, onError: (e: Error) => void) {
    this.req = httpRequest(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      this.response = res
      this.status = res.statusCode ?? 0
      this.headers = res.headers
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => this.feed(chunk))
      res.on('end', () => this.finish())
      res.on('close', () => this.finish())
      res.on('error', () => this.finish())
      onResponse(this)
    })
    this.req.on('error', (e) => {
      this.finish()
      onError(e)
    })
    this.req.end()
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      new SseClient(url, headers, resolve, reject)
    })
  }

  /** Wait until `predicate` holds for the collected events (checked on every event), or fail after `timeoutMs`. */
  async until(predicate: (events: SseEvent[]) => boolean, timeoutMs = 5_000, what = 'events'): Promise<SseEvent[]> {
    await this.waitFor(() => predicate(this.events), timeoutMs, what)
    return this.events
  }

  /** Wait for the stream to end (server closed it). */
  ended$(timeoutMs = 5_000): Promise<void> {
    return this.waitFor(() => this.ended, timeoutMs, 'the stream to end', true)
  }

  /** Wait until `check()` holds, re-checked whenever something arrives; fail after `timeoutMs` or when the stream ends first. */
  waitFor(check: () => boolean, timeoutMs = 5_000, what = 'events', endIsOk = false): Promise<void> {
    if (check()) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      const got = () => JSON.stringify(this.events.map((e) => [e.id, e.event]))
      const done = (error?: Error): void => {
        clearTimeout(timer)
        this.waiters = this.waiters.filter((w) => w !== waiter)
        if (error) reject(error)
        else resolve()
      }
      const timer = setTimeout(() => done(new Error(`timed out waiting for ${what}; got ${got()}${this.ended ? ' (stream ended)' : ''}`)), timeoutMs)
      const waiter = (): void => {
        if (check()) done()
        else if (this.ended && !endIsOk) done(new Error(`stream ended before ${what}; got ${got()}`))
      }
      this.waiters.push(waiter)
    })
  }

  /** Store events only (what has an id), as [id, type]. */
  storeEvents(): SseEvent[] {
    return this.events.filter((e) => e.id !== undefined && e.event !== 'reset')
  }

  close(): void {
    this.req.destroy()
    this.response?.destroy()
    this.finish()
  }

  private feed(chunk: string): void {
    this.buffer += chunk
    let at: number
    while ((at = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, at)
      this.buffer = this.buffer.slice(at + 2)
      const event: SseEvent = { event: 'message', data: '' }
      const data: string[] = []
      let isEvent = false
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim())
          continue
        }
        const colon = line.indexOf(':')
        const field = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
        isEvent = true
        if (field === 'id') event.id = value
        else if (field === 'event') event.event = value
        else if (field === 'data') data.push(value)
      }
      if (isEvent) {
        event.data = data.join('\n')
        this.events.push(event)
      }
      this.notify()
    }
  }

  private finish(): void {
    if (this.ended) return
    this.ended = true
    this.notify()
  }

  private notify(): void {
    for (const w of [...this.waiters]) w()
  }
}

/** Start a server on an ephemeral loopback port; `cleanups` closes it after the test. */
export async function serve(store: Store, cleanups: Cleanups, options: HttpServerOptions = {}): Promise<HttpServer> {
  const server = await startHttpServer(store, { port: 0, host: '127.0.0.1', staticDir: null, log: () => {}, validateOutput: true, ...options })
  cleanups.push(() => server.close())
  return server
}

/** The header an identity's secret (an agent token, a session token) goes in. */
export const bearer = (token: string): { Authorization: string } => ({ Authorization: `Bearer ${token}` })

/** The one-time code of a sign-in link (`…/sign-in#code=…`). */
export const codeOf = (link: string): string => decodeURIComponent(new URL(link).hash.replace(/^#code=/, ''))

/** A person added to `store` (an admin with `role`) and signed in on `url`: their session token. */
export async function signedIn(store: Store, url: string, name: string, role?: 'admin'): Promise<string> {
  const added = await addPerson(store, name, { publicUrl: url, ...(role ? { role } : {}) })
  const redeemed = await request(`${url}/auth/redeem`, { method: 'POST', body: { code: codeOf(added.link) } })
  if (redeemed.status !== 200) throw new Error(`signing ${name} in: ${redeemed.status}`)
  return redeemed.json.token as string
}
