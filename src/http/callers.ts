/**
 * Who a request comes from, and what their role lets them do.
 *
 * The team inbox is off (no identity asked; the --token check alone, or nobody: local use) until
 * the store knows a person or an agent, or the server was started with --require-sign-in. Then
 * every API, event-stream and MCP request needs `Authorization: Bearer <secret>`: an agent's
 * token, a person's session token, or the server's own --token (the operator, with every right).
 * No cookies anywhere: the overlay runs on another site, where third-party cookies are blocked,
 * and bearer headers are not sent by the browser on its own (no CSRF). See docs/SECURITY.md.
 *
 * A revocation or a sign-out closes at once what its caller has open (event streams, MCP).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Subscription } from 'rxjs'
import { Authenticator, type Principal } from '../auth/identities.js'
import type { Role } from '../store/model.js'
import type { Store } from '../store/store.js'
import { RateLimiter } from './rate-limit.js'
import { HttpError } from './respond.js'
import type { Security } from './security.js'

/** What a request may do: a role, the operator's --token, or nobody known (the zero-config local mode). */
export type Caller = { kind: 'identity'; principal: Principal } | { kind: 'operator' } | { kind: 'local' }

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

/**
 * Whether the caller may see who else is on the team (identities, their credentials, sign-in
 * times): an admin, the operator and local use. The roster's events are left out for others.
 */
export function seesRoster(caller: Caller): boolean {
  return caller.kind !== 'identity' || caller.principal.identity.role === 'admin'
}

/**
 * Whether the caller may see the agents' permission requests and the answers: whoever may answer
 * them (a person, an admin, the operator and local use), never an agent.
 */
export function seesPermissions(caller: Caller): boolean {
  return caller.kind !== 'identity' || caller.principal.identity.role !== 'agent'
}

/** The bearer secret of a request, if any. */
export function bearerOf(req: IncomingMessage): string | undefined {
  const m = /^Bearer[ \t]+(\S+)\s*$/i.exec(req.headers.authorization ?? '')
  return m ? m[1] : undefined
}

/** The identity, kind and role a caller is shown as. */
export function identityView(p: Principal): { id: string; name: string; kind: string; role: string } {
  return { id: p.identity.id, name: p.identity.name, kind: p.identity.kind, role: p.identity.role }
}

const UNAUTHORIZED_HEADERS = { 'WWW-Authenticate': 'Bearer realm="marginalia"' }
const FAILURES = 'Too many failed authentications from this address'

export interface CallersOptions {
  /** Ask for sign-in even while the store knows nobody. */
  requireSignIn: boolean
  /** Trust X-Forwarded-For (only behind a proxy that sets it). */
  trustProxy: boolean
  /** Requests per second per identity and the burst on top. */
  ratePerSecond: number
  rateBurst: number
  /** Failed authentications per client address, sustained per second and the burst. */
  authFailuresPerSecond: number
  authFailureBurst: number
  /** Streams one identity has open at once (event streams, MCP requests). */
  maxStreamsPerIdentity: number
  clock: () => Date
}

export class Callers {
  readonly auth: Authenticator
  readonly limiter: RateLimiter
  /** Failed authentications per client address: over budget, a secret that needs a key derivation is not checked. */
  readonly failures: RateLimiter
  private readonly open = new Map<() => void, { identityId: string; credentialId: string }>()
  private readonly subscription: Subscription

  constructor(
    private readonly store: Store,
    private readonly security: Security,
    private readonly options: CallersOptions,
  ) {
    this.auth = new Authenticator(store, options.clock)
    this.limiter = new RateLimiter(options.ratePerSecond, options.rateBurst, () => options.clock().getTime())
    this.failures = new RateLimiter(options.authFailuresPerSecond, options.authFailureBurst, () => options.clock().getTime())
    // Revocation and sign-out close what is open at once (changes$ also carries other processes' events: `marginalia revoke`).
    this.subscription = store.changes$.subscribe((event) => {
      if (event.type === 'identity.revoked') this.closeWhere((o) => o.identityId === event.identityId)
      if (event.type === 'credential.ended') {
        this.auth.verifier.forget(event.credentialId)
        this.closeWhere((o) => o.credentialId === event.credentialId)
      }
    })
  }

  /** Whether requests need a bearer secret of an identity (the team inbox is on). */
  get active(): boolean {
    return this.options.requireSignIn || this.store.identities.any
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
   * Who calls: with the team on, a bearer secret (401 without); else the --token check, or
   * nobody (local use). Sets `seen.caughtUp` when it caught up with other processes first.
   */
  async identify(req: IncomingMessage, seen?: { caughtUp: boolean }): Promise<Caller> {
    if (this.active || bearerOf(req) !== undefined) {
      // What other processes wrote counts from the next request: a revocation by `marginalia revoke`, a
      // sign-out or new person on another server sharing the store (read-after-write, as for reads).
      const catchingUp = this.store.catchUp()
      if (catchingUp) await catchingUp
      if (seen) seen.caughtUp = true
    }
    if (this.active) return this.bearer(req, (secret) => this.security.isToken(secret))
    this.security.checkToken(req)
    return this.security.requiresToken ? { kind: 'operator' } : { kind: 'local' }
  }

  /**
   * The caller a bearer secret names: 401 without a working secret. `isOperator` checks the
   * server's --token (constant time). Counts the request against the caller's rate limit.
   */
  async bearer(req: IncomingMessage, isOperator: (secret: string) => boolean): Promise<Caller> {
    const secret = bearerOf(req)
    if (secret === undefined) throw new HttpError(401, 'UNAUTHORIZED', 'Sign in first: this server needs "Authorization: Bearer <token>" (an agent token, or a person\'s session from the sign-in link).', undefined, UNAUTHORIZED_HEADERS)
    if (isOperator(secret)) {
      this.limiter.take('operator')
      return { kind: 'operator' }
    }
    // An address over its budget of failures gets no key derived for it (scrypt is the costly part).
    const address = `ip:${this.clientAddress(req)}`
    if (this.auth.derivesKey(secret)) this.failures.check(address, FAILURES)
    const principal = await this.auth.authenticate(secret)
    if (!principal) {
      this.failures.take(address, FAILURES)
      throw new HttpError(401, 'UNAUTHORIZED', 'The bearer token is not valid: it was revoked, signed out, has expired, or never existed.', undefined, UNAUTHORIZED_HEADERS)
    }
    // A session handed to an app works from that app (or with no Origin: not from a browser).
    const origin = req.headers.origin
    if (principal.credential.origin !== undefined && origin !== undefined && origin !== principal.credential.origin) {
      throw new HttpError(403, 'FORBIDDEN', `This session was handed to ${principal.credential.origin}; it does not work from ${origin}.`)
    }
    // One budget per identity: minting more sessions or tokens buys no more requests.
    this.limiter.take(principal.identity.id)
    return { kind: 'identity', principal }
  }

  /**
   * Keep `close` until the response ends; call it when its identity is revoked or its credential
   * ends. 429 when the identity has its share of streams open already.
   */
  track(caller: Caller, res: ServerResponse, close: () => void): void {
    if (caller.kind !== 'identity') return
    const id = caller.principal.identity.id
    let mine = 0
    for (const o of this.open.values()) if (o.identityId === id) mine++
    if (mine >= this.options.maxStreamsPerIdentity) {
      throw new HttpError(429, 'RATE_LIMITED', `${caller.principal.identity.name} has ${mine} streams open (event streams and MCP requests), the most one identity may; close one first.`, { open: mine }, { 'Retry-After': '5' })
    }
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
}
