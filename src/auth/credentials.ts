/**
 * Secrets of people and agents: made here, shown once, stored only as hashes.
 *
 * A secret reads `<prefix><credential id>.<random>`: the id finds the stored record without a
 * search over hashes, the random part (256 bits) is what proves possession. Long-lived secrets
 * (agent tokens) and one-time sign-in codes are hashed with scrypt (a slow, memory-hard KDF);
 * session tokens (short-lived, high-entropy, checked on every request) with SHA-256. Every check
 * does the same work whether or not the id exists (a dummy record stands in), and compares with
 * `timingSafeEqual`, so a wrong secret costs as long as a right one.
 */
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import type { Credential, CredentialKind } from '../store/model.js'

const PREFIX: Record<CredentialKind, string> = { sign_in: 'mgc_', agent_token: 'mga_', session: 'mgs_' }
const SECRET = /^mg([csa])_([a-z0-9]{20})\.([A-Za-z0-9_-]{43})$/
const KIND_OF: Record<string, CredentialKind> = { c: 'sign_in', a: 'agent_token', s: 'session' }

/** scrypt cost (N = 2^14, r = 8, p = 1: 16 MiB and tens of milliseconds per check, off the event loop). */
const SCRYPT = { N: 16_384, r: 8, p: 1, keylen: 32 } as const

/**
 * At most this many key derivations run at once; the others wait their turn. scrypt runs on
 * libuv's thread pool (4 threads by default), which file reads share: a flood of tokens to check
 * must not leave attachment reads and store writes waiting behind it.
 */
const MAX_KDF_IN_FLIGHT = 2
let kdfInFlight = 0
const kdfWaiting: (() => void)[] = []

async function scrypt(secret: string, salt: Buffer, options: { N: number; r: number; p: number; keylen: number }): Promise<Buffer> {
  if (kdfInFlight < MAX_KDF_IN_FLIGHT) kdfInFlight++
  else await new Promise<void>((resolve) => kdfWaiting.push(resolve)) // the finishing derivation hands its slot over
  try {
    const opts: ScryptOptions = { N: options.N, r: options.r, p: options.p, maxmem: 64 * 1024 * 1024 }
    return await new Promise<Buffer>((resolve, reject) => scryptCb(secret, salt, options.keylen, opts, (e, key) => (e ? reject(e) : resolve(key))))
  } finally {
    const next = kdfWaiting.shift()
    if (next) next()
    else kdfInFlight--
  }
}

/** A new secret of `kind`: the text handed out once, and what the store keeps. */
export async function newCredential(kind: CredentialKind): Promise<{ id: string; secret: string; hash: string }> {
  const id = randomBytes(10).toString('hex')
  const secret = `${PREFIX[kind]}${id}.${randomBytes(32).toString('base64url')}`
  return { id, secret, hash: await hashSecret(kind, secret) }
}

/** The stored form of a secret: `scrypt$N$r$p$salt$key` or `sha256$digest` (base64url). */
async function hashSecret(kind: CredentialKind, secret: string): Promise<string> {
  if (kind === 'session') return `sha256$${sha256(secret).toString('base64url')}`
  const salt = randomBytes(16)
  const key = await scrypt(secret, salt, SCRYPT)
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`
}

/** The id and kind a secret names, or undefined when it is not shaped like one of ours. */
export function parseSecret(secret: string): { id: string; kind: CredentialKind } | undefined {
  const m = SECRET.exec(secret)
  return m ? { id: m[2]!, kind: KIND_OF[m[1]!]! } : undefined
}

/** Stands in for a record that does not exist, so that a check costs the same either way. */
const DUMMY: Record<CredentialKind, string> = {
  sign_in: `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(32).toString('base64url')}`,
  agent_token: `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(32).toString('base64url')}`,
  session: `sha256$${Buffer.alloc(32).toString('base64url')}`,
}

/**
 * Whether `secret` matches the stored record `stored` (of the kind the secret names; undefined
 * when no record has its id). Always hashes and compares, in constant time; never exits early.
 */
export async function verifySecret(secret: string, kind: CredentialKind, stored: Pick<Credential, 'hash' | 'kind'> | undefined): Promise<boolean> {
  const usable = stored !== undefined && stored.kind === kind
  const hash = usable ? stored.hash : DUMMY[kind]
  const parts = hash.split('$')
  let expected: Buffer
  let actual: Buffer
  if (parts[0] === 'sha256' && parts.length === 2) {
    expected = Buffer.from(parts[1]!, 'base64url')
    actual = sha256(secret)
  } else if (parts[0] === 'scrypt' && parts.length === 6) {
    const [, n, r, p, salt, key] = parts as [string, string, string, string, string, string]
    expected = Buffer.from(key, 'base64url')
    actual = await scrypt(secret, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p), keylen: expected.length })
  } else {
    return false
  }
  // Same length by construction; compare digests of both so a damaged record cannot throw.
  const same = timingSafeEqual(sha256(actual), sha256(expected))
  return same && usable
}

function sha256(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest()
}

/**
 * `verifySecret` with a short memory for scrypt records: once a secret of a record was proven,
 * that record's next checks compare SHA-256 digests (microseconds instead of ~100 ms of scrypt
 * per agent request). For one record id a right and a wrong secret still cost the same (both
 * take the same path, both end in `timingSafeEqual`); what the time tells is only whether the
 * id was used lately, and credential ids are not secret (they are in the event log).
 */
export class CredentialVerifier {
  private readonly proven = new Map<string, { digest: Buffer; until: number }>()

  constructor(
    private readonly ttlMs = 5 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  async verify(secret: string, kind: CredentialKind, id: string, stored: Pick<Credential, 'hash' | 'kind'> | undefined): Promise<boolean> {
    const memo = this.proven.get(id)
    if (memo && memo.until > this.now()) {
      const same = timingSafeEqual(sha256(secret), memo.digest)
      return same && stored !== undefined && stored.kind === kind
    }
    if (memo) this.proven.delete(id)
    const ok = await verifySecret(secret, kind, stored)
    if (ok && stored!.hash.startsWith('scrypt$')) {
      if (this.proven.size >= 10_000) this.proven.clear()
      this.proven.set(id, { digest: sha256(secret), until: this.now() + this.ttlMs })
    }
    return ok
  }

  /** Whether checking a secret of record `id` compares remembered digests (no key derivation). */
  remembers(id: string): boolean {
    const memo = this.proven.get(id)
    return memo !== undefined && memo.until > this.now()
  }

  /** Forget a record (it ended or its identity was revoked). */
  forget(id: string): void {
    this.proven.delete(id)
  }
}
