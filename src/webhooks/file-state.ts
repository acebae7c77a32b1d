/**
 * Webhook endpoints of a file store: `webhooks.json` beside `store.json`, mode 0600 (it holds the
 * signing secrets), replaced atomically (a new file, fsynced, renamed), read and written under its
 * own cross-process lock (`webhooks.json.lock`, proper-lockfile, 5 s stale) so a serve, a second
 * serve and the CLI can all change it. Never read through a link (a cloned repository can plant one).
 */
import { constants as fsc, promises as fsp } from 'node:fs'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import { readNoFollow, regularFileSync } from '../store/fs/no-follow.js'
import { LOG_LIMIT, mayClaim, patched, type DeliveryAttempt, type EndpointPatch, type EndpointRecord, type WebhookState } from './state.js'

interface FileShape {
  version: 1
  endpoints: EndpointRecord[]
  attempts: DeliveryAttempt[]
}

/** A state file larger than this is refused (50 attempts × a few endpoints is kilobytes). */
const MAX_BYTES = 16 * 1024 * 1024

export class FileWebhookState implements WebhookState {
  readonly location: string

  constructor(storeFile: string) {
    this.location = path.join(path.dirname(path.resolve(storeFile)), 'webhooks.json')
  }

  async list(): Promise<EndpointRecord[]> {
    return (await this.read()).endpoints
  }

  async add(endpoint: EndpointRecord): Promise<void> {
    await this.change((s) => {
      s.endpoints.push(endpoint)
    })
  }

  async remove(id: string): Promise<boolean> {
    return this.change((s) => {
      const before = s.endpoints.length
      s.endpoints = s.endpoints.filter((e) => e.id !== id)
      s.attempts = s.attempts.filter((a) => a.endpointId !== id)
      return s.endpoints.length < before
    })
  }

  async claim(id: string, owner: string, ms: number): Promise<EndpointRecord | null> {
    return this.change((s) => {
      const now = Date.now()
      const i = s.endpoints.findIndex((e) => e.id === id)
      if (i < 0 || !mayClaim(s.endpoints[i]!, owner, now)) return null
      s.endpoints[i] = { ...s.endpoints[i]!, lease: { owner, until: now + ms } }
      return s.endpoints[i]
    })
  }

  async update(id: string, patch: EndpointPatch, owner?: string): Promise<boolean> {
    return this.change((s) => {
      const i = s.endpoints.findIndex((e) => e.id === id)
      if (i < 0 || (owner !== undefined && s.endpoints[i]!.lease?.owner !== owner)) return false
      s.endpoints[i] = patched(s.endpoints[i]!, patch)
      return true
    })
  }

  async release(id: string, owner: string): Promise<void> {
    await this.change((s) => {
      const e = s.endpoints.find((x) => x.id === id)
      if (e?.lease?.owner === owner) delete e.lease
    })
  }

  async record(attempt: DeliveryAttempt): Promise<void> {
    await this.change((s) => {
      s.attempts.push(attempt)
      const mine = s.attempts.filter((a) => a.endpointId === attempt.endpointId)
      if (mine.length > LOG_LIMIT) {
        const drop = new Set(mine.slice(0, mine.length - LOG_LIMIT))
        s.attempts = s.attempts.filter((a) => !drop.has(a))
      }
    })
  }

  async attempts(id: string, limit = LOG_LIMIT): Promise<DeliveryAttempt[]> {
    return (await this.read()).attempts
      .filter((a) => a.endpointId === id)
      .reverse()
      .slice(0, limit)
  }

  async close(): Promise<void> {}

  private async read(): Promise<FileShape> {
    const bytes = await readNoFollow(this.location, MAX_BYTES)
    if (bytes === undefined) return { version: 1, endpoints: [], attempts: [] }
    let parsed: unknown
    try {
      parsed = JSON.parse(bytes.toString('utf8'))
    } catch {
      throw new Error(`${this.location} is not valid JSON; restore it or remove it (its endpoints are then gone: add them again)`)
    }
    if (!isShape(parsed)) throw new Error(`${this.location} is not a webhooks file (expected { version: 1, endpoints, attempts }); restore it or remove it`)
    return parsed
  }

  /** Read, change and write the file under its lock. */
  private async change<T>(edit: (s: FileShape) => T): Promise<T> {
    await fsp.mkdir(path.dirname(this.location), { recursive: true })
    const release = await lockfile.lock(this.location, {
      realpath: false,
      lockfilePath: `${this.location}.lock`,
      stale: 5_000,
      update: 1_000,
      retries: { retries: 400, minTimeout: 5, maxTimeout: 50, factor: 1.5 },
    })
    try {
      const state = await this.read()
      const result = edit(state)
      await this.write(state)
      return result
    } finally {
      await release().catch(() => {
        // compromised or already released: the next change takes the lock again
      })
    }
  }

  private async write(state: FileShape): Promise<void> {
    regularFileSync(this.location)
    const temp = `${path.join(path.dirname(this.location), '.webhooks.json')}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
    const handle = await fsp.open(temp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o600)
    try {
      try {
        await handle.writeFile(`${JSON.stringify(state, null, 1)}\n`)
        await handle.sync()
      } finally {
        await handle.close()
      }
      await fsp.rename(temp, this.location)
    } catch (e) {
      await fsp.unlink(temp).catch(() => {})
      throw e
    }
  }
}

function isShape(value: unknown): value is FileShape {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Partial<FileShape>
  return v.version === 1 && Array.isArray(v.endpoints) && Array.isArray(v.attempts) && v.endpoints.every((e) => typeof e === 'object' && e !== null && typeof e.id === 'string' && typeof e.url === 'string' && typeof e.secret === 'string' && typeof e.cursor === 'number')
}
