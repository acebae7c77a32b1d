/**
 * The team side of the server (issue 23): who a request comes from, what their role lets them
 * do, per-token rate limits, revocation that closes open streams, and the sign-in pages.
 *
 * Off (everything exactly as before) until the store knows a person or an agent, or the server
 * was started with --require-sign-in. Then every API, event-stream and MCP request needs
 * `Authorization: Bearer <secret>`: an agent's token, a person's session token, or the
 * server's own --token (the operator, with every right). No cookies anywhere: the overlay runs on
 * another site, where third-party cookies are blocked, and bearer headers are not sent by the
 * browser on its own (no CSRF). See docs/SECURITY.md.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Subscription } from 'rxjs'
import { Authenticator, addAgent, addPerson, DEFAULT_SESSION_TTL_MS, type Principal } from '../auth/identities.js'
import type { Store } from '../store/store.js'
import type { Role } from '../store/model.js'
import { readJson } from './body.js'
import { HttpError, sendJson } from './respond.js'

export const DEFAULT_RATE_PER_SECOND = 20
export const DEFAULT_RATE_BURST = 60

export interface TeamOptions {
  /** Ask for sign-in even while the store knows nobody. */
  requireSignIn?: boolean
  /** The server's address as people reach it (sign-in links; its host passes the Host check). */
  publicUrl?: string
  /** Trust X-Forwarded-For / X-Forwarded-Host / X-Forwarded-Proto (only behind a proxy that sets them). */
  trustProxy?: boolean
  /** Requests per second per token (sustained; 0 = no limit) and the burst on top. */
  ratePerSecond?: number
  rateBurst?: number
  /** How long a person's session token works (default 12 h). */
  sessionTtlMs?: number
  clock?: () => Date
}

/** What a request may do: a role, the operator's --token, or nobody known (the zero-config local mode). */
export type Caller = { kind: 'identity'; principal: Principal } | { kind: 'operator' } | { kind: 'local' }

/** A token bucket per key: `perSecond` sustained, `burst` at once. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Take one token for `key`; 429 with Retry-After when there is none. */
  take(key: string): void {
    if (this.perSecond <= 0) return
    const now = this.now()
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond)
    b.at = now
    if (b.tokens < 1) {
      this.buckets.set(key, b)
      const wait = Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond))
      throw new HttpError(429, 'RATE_LIMITED', `Too many requests for this token: at most ${this.perSecond} per second (bursts of ${this.burst}). Retry in ${wait} s.`, { retryAfterSeconds: wait }, { 'Retry-After': String(wait) })
    }
    b.tokens -= 1
    this.buckets.set(key, b)
    if (this.buckets.size > 10_000) for (const [k, v] of this.buckets) if (v.tokens >= this.burst) this.buckets.delete(k)
  }
}

const ROLE_WORDS: Record<Role, string> = {
  person: 'a person (create annotations, reply, reopen, answer questions, delete their own)',
  agent: 'an agent (MCP tools and the agent REST routes)',
  admin: 'an admin',
}

/** 403 unless the caller has one of `roles` (the operator and local use have every right). */
export function requireRole(caller: Caller, roles: readonly Role[], what: string): void {
  if (caller.kind !== 'identity') return
  const { role, name } = caller.principal.identity
  if (role === 'admin' || roles.includes(role)) return
  throw new HttpError(403, 'ROLE_FORBIDDEN', `${name} is ${ROLE_WORDS[role]} and may not ${what}; that needs ${roles.map((r) => `the ${r} role`).join(' or ')}${roles.includes('admin') ? '' : ' or admin'}.`, {
    role,
    needs: [...roles],
  })
}

/** Which roles a REST route needs (beyond reading, which every role may). */
export function apiRoles(method: string, path: string): { roles: readonly Role[]; what: string } | undefined {
  if (method === 'GET' || method === 'HEAD') {
    if (/^\/api\/identities$/.test(path)) return { roles: ['admin'], what: 'list people and agents' }
    return undefined
  }
  if (path === '/api/people' || path === '/api/agents' || /^\/api\/identities\/[^/]+\/revoke$/.test(path)) return { roles: ['admin'], what: 'add or revoke people and agents' }
  if (path === '/api/sessions' || /^\/api\/sessions\/[^/]+\/annotations$/.test(path)) return { roles: ['person'], what: 'create annotations' }
  if (/^\/api\/annotations\/[^/]+\/reopen$/.test(path)) return { roles: ['person'], what: 'reopen annotations' }
  if (/^\/api\/annotations\/[^/]+\/(acknowledge|resolve|dismiss)$/.test(path)) return { roles: ['agent'], what: 'use the agent routes' }
  if (method === 'DELETE' && /^\/api\/annotations\/[^/]+$/.test(path)) return { roles: ['person'], what: 'delete annotations' }
  if (path === '/api/annotations/bulk') return { roles: ['person'], what: 'change annotations in bulk' }
  if (/^\/api\/annotations\/[^/]+\/replies$/.test(path) || path === '/api/attachments') return { roles: ['person', 'agent'], what: 'reply' }
  return { roles: ['admin'], what: `${method} ${path}` }
}

/** The bearer secret of a request, if any. */
export function bearerOf(req: IncomingMessage): string | undefined {
  const m = /^Bearer[ \t]+(\S+)\s*$/i.exec(req.headers.authorization ?? '')
  return m ? m[1] : undefined
}

const UNAUTHORIZED_HEADERS = { 'WWW-Authenticate': 'Bearer realm="marginalia"' }

export class Team {
  readonly auth: Authenticator
  readonly limiter: RateLimiter
  /** For the sign-in code exchange, per client address (guessing codes is pointless, but cheap to refuse). */
  private readonly signInLimiter: RateLimiter
  private readonly open = new Map<() => void, { identityId: string; credentialId: string }>()
  private readonly subscription: Subscription
  readonly sessionTtlMs: number

  constructor(
    private readonly store: Store,
    readonly options: TeamOptions,
    /** The exact app origins a person's token may be handed to (--allow-origin). */
    private readonly appOrigins: ReadonlySet<string>,
  ) {
    const clock = options.clock ?? (() => new Date())
    this.auth = new Authenticator(store, clock)
    this.limiter = new RateLimiter(options.ratePerSecond ?? DEFAULT_RATE_PER_SECOND, options.rateBurst ?? DEFAULT_RATE_BURST, () => clock().getTime())
    this.signInLimiter = new RateLimiter(0.2, 10, () => clock().getTime())
    this.sessionTtlMs = options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS
    // Revocation and sign-out close what is open at once (changes$ also carries other processes' events: `marginalia revoke`).
    this.subscription = store.changes$.subscribe((event) => {
      if (event.type === 'identity.revoked') this.closeWhere((o) => o.identityId === event.identityId)
      if (event.type === 'credential.ended') {
        this.auth.verifier.forget(event.credentialId)
        this.closeWhere((o) => o.credentialId === event.credentialId)
      }
    })
  }

  /** Whether requests need a bearer secret. */
  get active(): boolean {
    return this.options.requireSignIn === true || this.store.identities.any
  }

  /** The client's address (X-Forwarded-For's first entry only with --trust-proxy). */
  clientAddress(req: IncomingMessage): string {
    if (this.options.trustProxy) {
      const fwd = req.headers['x-forwarded-for']
      const first = (Array.isArray(fwd) ? fwd[0] : fwd)?.split(',')[0]?.trim()
      if (first) return first
    }
    return req.socket.remoteAddress ?? ''
  }

  /**
   * Who the request comes from: 401 without a working secret. `isOperator` checks the server's
   * --token (constant time). Counts the request against the caller's rate limit.
   */
  async identify(req: IncomingMessage, isOperator: (secret: string) => boolean): Promise<Caller> {
    const secret = bearerOf(req)
    if (secret === undefined) throw new HttpError(401, 'UNAUTHORIZED', 'Sign in first: this server needs "Authorization: Bearer <token>" (an agent token, or a person\'s session from the sign-in link).', undefined, UNAUTHORIZED_HEADERS)
    if (isOperator(secret)) {
      this.limiter.take('operator')
      return { kind: 'operator' }
    }
    const principal = await this.auth.authenticate(secret)
    if (!principal) throw new HttpError(401, 'UNAUTHORIZED', 'The bearer token is not valid: it was revoked, signed out, has expired, or never existed.', undefined, UNAUTHORIZED_HEADERS)
    this.limiter.take(principal.credential.id)
    return { kind: 'identity', principal }
  }

  /** Keep `close` until the response ends; call it when its identity is revoked or its credential ends. */
  track(caller: Caller, res: ServerResponse, close: () => void): void {
    if (caller.kind !== 'identity') return
    this.open.set(close, { identityId: caller.principal.identity.id, credentialId: caller.principal.credential.id })
    res.once('close', () => this.open.delete(close))
  }

  private closeWhere(match: (o: { identityId: string; credentialId: string }) => boolean): void {
    for (const [close, o] of [...this.open]) {
      if (!match(o)) continue
      this.open.delete(close)
      close()
    }
  }

  stop(): void {
    this.subscription.unsubscribe()
  }

  /** /auth/* and /sign-in: answers and returns true, or returns false when the path is not one of them. */
  async handle(req: IncomingMessage, res: ServerResponse, pathname: string, url: URL, cors: Record<string, string>, isOperator: (secret: string) => boolean, maxBodyBytes: number): Promise<boolean> {
    const method = req.method ?? 'GET'
    const json = (status: number, body: unknown) => sendJson(res, status, body, cors)
    switch (pathname) {
      case '/sign-in':
        if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'Use GET.', undefined, { Allow: 'GET' })
        page(res, signInPage())
        return true
      case '/auth/popup': {
        if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'Use GET.', undefined, { Allow: 'GET' })
        const origin = url.searchParams.get('origin') ?? ''
        if (!this.appOrigins.has(origin)) {
          page(res, popupRefusedPage(origin), 403)
          return true
        }
        page(res, popupPage(origin))
        return true
      }
      case '/auth/redeem': {
        if (method !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'Use POST.', undefined, { Allow: 'POST' })
        this.signInLimiter.take(`ip:${this.clientAddress(req)}`)
        const body = (await readJson(req, res, maxBodyBytes)) as { code?: unknown } | undefined
        const code = typeof body?.code === 'string' ? body.code : ''
        const { token, identity, expiresAt } = await this.auth.redeem(code, this.sessionTtlMs)
        json(200, { token, expiresAt, identity: { id: identity.id, name: identity.name, kind: identity.kind, role: identity.role } })
        return true
      }
      case '/auth/token': {
        // A person signed in on this origin gets a token of their own for one allowed app origin (the overlay's).
        if (method !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'Use POST.', undefined, { Allow: 'POST' })
        const caller = await this.identify(req, () => false)
        if (caller.kind !== 'identity' || caller.principal.identity.kind !== 'person') throw new HttpError(403, 'ROLE_FORBIDDEN', 'Only a signed-in person gets an overlay session.')
        const body = (await readJson(req, res, maxBodyBytes)) as { origin?: unknown } | undefined
        const origin = typeof body?.origin === 'string' ? body.origin : ''
        if (!this.appOrigins.has(origin)) throw new HttpError(403, 'FORBIDDEN', `"${origin}" is not an allowed app origin (serve --allow-origin).`)
        const { token, expiresAt } = await this.auth.startSession(caller.principal.identity.id, this.sessionTtlMs)
        json(200, { token, expiresAt, identity: identityView(caller.principal) })
        return true
      }
      case '/auth/me': {
        const caller = await this.identify(req, isOperator)
        json(200, caller.kind === 'identity' ? { identity: identityView(caller.principal), expiresAt: caller.principal.credential.expiresAt ?? null } : { identity: null, operator: caller.kind === 'operator' })
        return true
      }
      case '/auth/sign-out': {
        if (method !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'Use POST.', undefined, { Allow: 'POST' })
        const caller = await this.identify(req, () => false)
        if (caller.kind === 'identity' && caller.principal.credential.kind === 'session') await this.store.identities.endCredential(caller.principal.credential.id, 'signed_out')
        json(200, { signedOut: true })
        return true
      }
      default:
        return false
    }
  }

  /** The admin routes of the REST API (their role is checked before). */
  async adminRoute(method: string, path: string, req: IncomingMessage, res: ServerResponse, cors: Record<string, string>, maxBodyBytes: number, publicUrl: string): Promise<boolean> {
    const json = (status: number, body: unknown) => sendJson(res, status, body, cors)
    if (method === 'GET' && path === '/api/identities') {
      json(200, { identities: this.store.identities.list() })
      return true
    }
    if (method === 'POST' && (path === '/api/people' || path === '/api/agents')) {
      const body = (await readJson(req, res, maxBodyBytes)) as { name?: unknown; role?: unknown } | undefined
      const name = typeof body?.name === 'string' ? body.name : ''
      if (path === '/api/agents') {
        json(201, await addAgent(this.store, name))
      } else {
        const role = body?.role === 'admin' ? 'admin' : 'person'
        json(201, await addPerson(this.store, name, { role, publicUrl }))
      }
      return true
    }
    const revoke = /^\/api\/identities\/([^/]+)\/revoke$/.exec(path)
    if (method === 'POST' && revoke) {
      json(200, await this.store.identities.revoke(decodeURIComponent(revoke[1]!)))
      return true
    }
    return false
  }
}

function identityView(p: Principal): { id: string; name: string; kind: string; role: string } {
  return { id: p.identity.id, name: p.identity.name, kind: p.identity.kind, role: p.identity.role }
}

function page(res: ServerResponse, html: string, status = 200): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(html)),
    'Cache-Control': 'no-store',
    // Never framed (clickjacking), never leaks its URL onward.
    'X-Frame-Options': 'DENY',
    'Content-Security-Policy': "frame-ancestors 'none'; default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'",
    'Referrer-Policy': 'no-referrer',
  })
  res.end(html)
}

const STYLE = '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#0f172a}button{font:inherit;padding:.4rem .9rem}</style>'
/** Where the server origin keeps a person's session (its own first-party storage). */
const SESSION_KEY = 'marginalia.session'

function signInPage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in · Marginalia</title>${STYLE}</head>
<body><h1>Marginalia</h1><p id="status">Signing you in…</p><p><button id="out" hidden>Sign out</button></p>
<script>
const KEY = ${JSON.stringify(SESSION_KEY)}
const status = document.getElementById('status'), out = document.getElementById('out')
const show = (s) => { status.textContent = s.name ? 'Signed in as ' + s.name + '. You can close this tab: the overlay on your app signs in with one click.' : s; out.hidden = !s.name }
const code = new URLSearchParams(location.hash.slice(1)).get('code')
history.replaceState(null, '', location.pathname) // the code leaves the address bar and the history
async function run() {
  if (code) {
    const r = await fetch('/auth/redeem', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code }) })
    const body = await r.json().catch(() => ({}))
    if (!r.ok) return show((body.error && body.error.message) || 'Sign-in failed.')
    const s = { token: body.token, name: body.identity.name, id: body.identity.id, expiresAt: body.expiresAt }
    localStorage.setItem(KEY, JSON.stringify(s))
    return show(s)
  }
  const s = JSON.parse(localStorage.getItem(KEY) || 'null')
  if (!s) return show('You are not signed in. Open the sign-in link you were sent.')
  const r = await fetch('/auth/me', { headers: { Authorization: 'Bearer ' + s.token } })
  if (!r.ok) { localStorage.removeItem(KEY); return show('Your session ended. Ask for a new sign-in link.') }
  show(s)
}
out.onclick = async () => {
  const s = JSON.parse(localStorage.getItem(KEY) || 'null')
  localStorage.removeItem(KEY)
  if (s) await fetch('/auth/sign-out', { method: 'POST', headers: { Authorization: 'Bearer ' + s.token } }).catch(() => {})
  show('Signed out.')
}
run().catch((e) => show('Sign-in failed: ' + e.message))
</script></body></html>`
}

function popupPage(origin: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in · Marginalia</title>${STYLE}</head>
<body><h1>Marginalia</h1><p id="status">Signing in ${escapeHtml(origin)}…</p>
<script>
const KEY = ${JSON.stringify(SESSION_KEY)}, ORIGIN = ${JSON.stringify(origin)}
const status = document.getElementById('status')
async function run() {
  const s = JSON.parse(localStorage.getItem(KEY) || 'null')
  if (!s) { status.textContent = 'You are not signed in here yet: open the sign-in link you were sent, then try again.'; return }
  const r = await fetch('/auth/token', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + s.token }, body: JSON.stringify({ origin: ORIGIN }) })
  const body = await r.json().catch(() => ({}))
  if (!r.ok) { if (r.status === 401) localStorage.removeItem(KEY); status.textContent = (body.error && body.error.message) || 'Sign-in failed.'; return }
  if (!window.opener) { status.textContent = 'Open this from the overlay.'; return }
  // Only the exact app origin can receive it: the browser drops the message for any other opener.
  window.opener.postMessage({ type: 'marginalia:session', token: body.token, expiresAt: body.expiresAt, identity: body.identity }, ORIGIN)
  status.textContent = 'Signed in as ' + body.identity.name + '.'
  window.close()
}
run().catch((e) => { status.textContent = 'Sign-in failed: ' + e.message })
</script></body></html>`
}

function popupRefusedPage(origin: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not allowed · Marginalia</title>${STYLE}</head>
<body><h1>Marginalia</h1><p>${escapeHtml(origin || 'This page')} is not an app this server lets people sign in from. The operator adds it with <code>marginalia serve --allow-origin</code>.</p></body></html>`
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}
