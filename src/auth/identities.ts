/**
 * People and agents as the operator and the server handle them: add one with its
 * first secret, sign a person in, check a bearer secret, find one by name or id. The store keeps
 * the records and hashes (store commands, so the event log is the audit trail); the secrets
 * exist only in what these functions return, once.
 */
import type { Store } from '../store/store.js'
import type { Actor, Credential, Identity, Role } from '../store/model.js'
import { CredentialError, NotFoundError, ValidationError } from '../store/errors.js'
import { CredentialVerifier, newCredential, parseSecret } from './credentials.js'

/** How long a sign-in link works (single use). */
export const SIGN_IN_TTL_MS = 24 * 3_600_000
/** How long a browser session token works by default. */
export const DEFAULT_SESSION_TTL_MS = 12 * 3_600_000

/** Who a request comes from, once its bearer secret checked out. */
export interface Principal {
  identity: Identity
  credential: Pick<Credential, 'id' | 'kind' | 'expiresAt' | 'parentId' | 'origin'>
  actor: Actor
}

function actorOf(identity: Identity): Actor {
  return { id: identity.id, name: identity.name, kind: identity.kind }
}

/** The sign-in page for a code: the code travels in the fragment, which no server log, proxy or Referer sees. */
function signInLink(publicUrl: string, code: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/sign-in#code=${encodeURIComponent(code)}`
}

export async function addPerson(store: Store, name: string, options: { role?: Role; publicUrl: string; now?: () => Date }): Promise<{ identity: Identity; link: string; expiresAt: string }> {
  const cred = await newCredential('sign_in')
  const expiresAt = new Date((options.now ?? (() => new Date()))().getTime() + SIGN_IN_TTL_MS).toISOString()
  const { identity } = await store.identities.add({ name, kind: 'person', ...(options.role ? { role: options.role } : {}) }, { id: cred.id, kind: 'sign_in', hash: cred.hash, expiresAt })
  return { identity, link: signInLink(options.publicUrl, cred.secret), expiresAt }
}

/** A new sign-in link for a person already known (the old ones keep working until used or expired). */
export async function newSignInLink(store: Store, identityId: string, options: { publicUrl: string; now?: () => Date }): Promise<{ link: string; expiresAt: string }> {
  const cred = await newCredential('sign_in')
  const expiresAt = new Date((options.now ?? (() => new Date()))().getTime() + SIGN_IN_TTL_MS).toISOString()
  await store.identities.issueCredential(identityId, { id: cred.id, kind: 'sign_in', hash: cred.hash, expiresAt })
  return { link: signInLink(options.publicUrl, cred.secret), expiresAt }
}

export async function addAgent(store: Store, name: string): Promise<{ identity: Identity; token: string }> {
  const cred = await newCredential('agent_token')
  const { identity } = await store.identities.add({ name, kind: 'agent' }, { id: cred.id, kind: 'agent_token', hash: cred.hash })
  return { identity, token: cred.secret }
}

/** A person or an agent by id, or by name (case-insensitive; one not revoked first). */
export function findIdentity(store: Store, nameOrId: string): Identity {
  const all = store.identities.list()
  const byId = all.find((i) => i.id === nameOrId)
  if (byId) return byId
  const named = all.filter((i) => i.name.toLowerCase() === nameOrId.trim().toLowerCase())
  const found = named.find((i) => i.revokedAt === undefined) ?? named[0]
  if (!found) throw new NotFoundError('identity', nameOrId)
  return found
}

/** Checks bearer secrets against the store; one per server (it remembers recently proven records). */
export class Authenticator {
  readonly verifier: CredentialVerifier

  constructor(
    private readonly store: Store,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.verifier = new CredentialVerifier(5 * 60_000, () => this.now().getTime())
  }

  /**
   * Whether checking `secret` as a bearer would derive a key (scrypt): a well-formed agent token
   * whose record was not proven lately. Session tokens cost a hash; anything else is refused unchecked.
   */
  derivesKey(secret: string): boolean {
    const parsed = parseSecret(secret)
    return parsed?.kind === 'agent_token' && !this.verifier.remembers(parsed.id)
  }

  /** The principal a bearer secret (agent token or session token) stands for, or undefined. Same work for a wrong secret as for a right one. */
  async authenticate(secret: string): Promise<Principal | undefined> {
    const parsed = parseSecret(secret)
    if (!parsed || parsed.kind === 'sign_in') return undefined
    const stored = this.store.identities.credential(parsed.id)
    const ok = await this.verifier.verify(secret, parsed.kind, parsed.id, stored)
    if (!ok || !stored) return undefined
    if (stored.expiresAt !== undefined && stored.expiresAt <= this.now().toISOString()) return undefined
    // A minted session works only while the sign-in session it came from does.
    if (stored.parentId !== undefined && this.store.identities.credential(stored.parentId) === undefined) return undefined
    const identity = this.store.identities.get(stored.identityId)
    if (!identity || identity.revokedAt !== undefined) return undefined
    const credential = {
      id: stored.id,
      kind: stored.kind,
      ...(stored.expiresAt ? { expiresAt: stored.expiresAt } : {}),
      ...(stored.parentId ? { parentId: stored.parentId } : {}),
      ...(stored.origin ? { origin: stored.origin } : {}),
    }
    return { identity, credential, actor: actorOf(identity) }
  }

  /** Exchange a one-time sign-in code for a session token (the code stops working). */
  async redeem(code: string, ttlMs: number): Promise<{ token: string; identity: Identity; expiresAt: string }> {
    const parsed = parseSecret(code)
    const stored = parsed ? this.store.identities.credential(parsed.id) : undefined
    const ok = parsed?.kind === 'sign_in' ? await this.verifier.verify(code, 'sign_in', parsed.id, stored) : false
    if (!ok || !stored || (stored.expiresAt !== undefined && stored.expiresAt <= this.now().toISOString())) {
      throw new CredentialError('This sign-in link was used already, has expired or was revoked. Ask whoever runs Marginalia for a new one.')
    }
    const session = await newCredential('session')
    const expiresAt = new Date(this.now().getTime() + ttlMs).toISOString()
    // The store checks again inside its transaction: two exchanges of one code cannot both succeed.
    const { identity } = await this.store.identities.redeemSignIn(stored.id, { id: session.id, kind: 'session', hash: session.hash, expiresAt })
    this.verifier.forget(stored.id)
    return { token: session.secret, identity, expiresAt }
  }

  /**
   * A new session token minted from a signed-in person's session, for one app origin (the
   * overlay's). It is part of that sign-in: it expires no later than the session it came from,
   * stops working when that one ends, and signing out of either ends both.
   */
  async startSession(parent: Principal, ttlMs: number, origin: string): Promise<{ token: string; expiresAt: string }> {
    if (!(ttlMs > 0)) throw new ValidationError([{ path: 'ttl', message: 'must be positive' }])
    const session = await newCredential('session')
    const own = new Date(this.now().getTime() + ttlMs).toISOString()
    const inherited = parent.credential.expiresAt
    const expiresAt = inherited !== undefined && inherited < own ? inherited : own
    const parentId = parent.credential.parentId ?? parent.credential.id
    await this.store.identities.issueCredential(parent.identity.id, { id: session.id, kind: 'session', hash: session.hash, expiresAt, parentId, origin })
    return { token: session.secret, expiresAt }
  }
}
