/**
 * The adapter contract as another adapter (a database, say) would meet it: the core asks the
 * adapter's own archive to keep annotations inside the write transaction before their events
 * are durable, reports stored events that do not fit in its own words (no file), and its
 * errors name no MCP tool.
 */
import { describe, expect, it } from 'vitest'
import { readdirSync } from 'node:fs'
import path from 'node:path'
import {
  CursorExpiredError,
  NotFoundError,
  Store,
  StoreDataError,
  StoreFileError,
  createMemoryStore,
  openStore,
  type Annotation,
  type ArchiveSink,
  type Decision,
  type StoreAdapter,
  type StoreEvent,
} from '../../../src/index.js'
import { FileAdapter } from '../../../src/store/file/file-adapter.js'
import { MemoryAdapter } from '../../../src/store/memory-adapter.js'
import { MemoryBlobStore } from '../../../src/store/blobs/index.js'
import { deterministic, memoryStore, testDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { CONTRACT_ADAPTERS } from '../../helpers/contract.js'
import { FILE_LOCATION, POSTGRES_LOCATION, STORE_LOCATIONS, isFileLocation, locationOf } from '../../../src/store/locations.js'

const cleanups = useCleanups()

/** A memory adapter with an archive of its own that logs the order of what happens. */
class ShelfAdapter extends MemoryAdapter {
  readonly log: string[] = []
  readonly shelf = new Map<string, Annotation>()
  failKeep = false

  override async transact(decide: (external: StoreEvent[]) => Promise<Decision>): Promise<void> {
    this.log.push('begin')
    await super.transact(async (external) => {
      const decision = await decide(external)
      this.log.push(`decided ${decision.events.map((e) => e.type).join(',')}`)
      return decision
    })
    this.log.push('durable')
  }

  override archive(): ArchiveSink {
    return {
      keep: async (_at, annotations) => {
        if (this.failKeep) throw new Error('the shelf is full')
        const fresh = annotations.filter((a) => !this.shelf.has(a.id))
        for (const a of fresh) this.shelf.set(a.id, a)
        this.log.push(`keep ${annotations.map((a) => a.id).join(',')}`)
        return { place: 'shelf', written: fresh.length }
      },
    }
  }
}

async function withFinished(adapter: ShelfAdapter) {
  const store = new Store(adapter, { snapshot: null, events: [] }, deterministic())
  cleanups.push(() => store.close())
  const s = await store.createSession({ url: 'http://x/' })
  const open = await store.addAnnotation({ sessionId: s.id, comment: 'still open' })
  const done = await store.addAnnotation({ sessionId: s.id, comment: 'done' })
  await store.resolve(done.id, { summary: 'fixed' })
  adapter.log.length = 0
  return { store, open, done }
}

describe('an adapter’s own archive', () => {
  it('keeps the annotations inside the transaction, before the events that remove them are durable', async () => {
    const adapter = new ShelfAdapter()
    const { store, open, done } = await withFinished(adapter)
    const events: StoreEvent[] = []
    store.changes$.subscribe((e) => events.push(e))
    const result = await store.archive({ olderThanMs: 0 })
    expect(adapter.log).toEqual(['begin', `keep ${done.id}`, 'decided annotation.archived', 'durable'])
    expect(result).toEqual({ archived: 1, completedEarlierRun: 0, ids: [done.id] })
    expect(events).toMatchObject([{ type: 'annotation.archived', annotationId: done.id, from: 'resolved', archiveFile: 'shelf' }])
    expect(adapter.shelf.get(done.id)?.replies).toMatchObject([{ message: 'fixed' }])
    expect(store.listAnnotations().map((a) => a.id)).toEqual([open.id])
  })

  it('counts what an earlier, interrupted run already kept', async () => {
    const adapter = new ShelfAdapter()
    const { store, done } = await withFinished(adapter)
    adapter.shelf.set(done.id, store.getAnnotation(done.id)) // kept, then the process died
    expect(await store.archive({ olderThanMs: 0 })).toEqual({ archived: 1, completedEarlierRun: 1, ids: [done.id] })
  })

  it('a failed archive write rejects the run and removes nothing', async () => {
    const adapter = new ShelfAdapter()
    const { store, done } = await withFinished(adapter)
    adapter.failKeep = true
    const rev = store.rev
    const events: StoreEvent[] = []
    store.changes$.subscribe((e) => events.push(e))
    await expect(store.archive({ olderThanMs: 0 })).rejects.toThrow('the shelf is full')
    expect(store.rev).toBe(rev)
    expect(events).toEqual([])
    expect(store.getAnnotation(done.id).status).toBe('resolved')
  })

  it('an adapter without an archive refuses, naming the store', async () => {
    const bare: StoreAdapter = {
      location: 'db://orders',
      load: async () => ({ snapshot: null, events: [] }),
      transact: async (decide) => void (await decide([])),
      poll: async () => [],
      watch: () => () => {},
      close: async () => {},
    }
    const store = new Store(bare, await bare.load())
    await expect(store.archive()).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('db://orders') })
  })
})

describe('the memory store’s archive', () => {
  it('needs a directory, and archives into one it is given', async () => {
    await expect(memoryStore().archive({ olderThanMs: 0 })).rejects.toThrow(/directory: is required for a store without a file/)
    const { dir } = testDir(cleanups)
    const store = createMemoryStore({ ...deterministic(), archiveDirectory: dir })
    const s = await store.createSession({ url: 'http://x/' })
    const a = await store.addAnnotation({ sessionId: s.id, comment: 'c' })
    await store.dismiss(a.id, { reason: 'by design' })
    const result = await store.archive({ olderThanMs: 0 })
    expect(result).toMatchObject({ archived: 1, ids: [a.id], file: path.join(dir, '2026-01-01.jsonl') })
    expect(readdirSync(dir)).toEqual(['2026-01-01.jsonl'])
  })
})

describe('errors in the store’s own words', () => {
  it('stored events that do not fit are a StoreDataError naming the adapter, with no file vocabulary', () => {
    const stray: StoreEvent = { type: 'annotation.replied', rev: 1, at: '2026-01-01T00:00:00.000Z', sessionId: 'ses_1', annotationId: 'ann_gone', reply: { id: 'rep_1', author: 'human', message: 'hi', createdAt: '2026-01-01T00:00:00.000Z' } }
    let error: unknown
    try {
      new Store(new MemoryAdapter(), { snapshot: null, events: [stray] })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(StoreDataError)
    expect(error).not.toBeInstanceOf(StoreFileError)
    expect(error).toMatchObject({ code: 'STORE_FILE', location: 'memory' })
    expect((error as Error).message).toMatch(/^memory: event rev 1 \(annotation\.replied\) in its event log cannot be applied: .*unknown annotation ann_gone\.$/)
    expect((error as Error).message).not.toMatch(/file/i)
  })

  it('not-found and expired-cursor messages name no MCP tool; their details say what was asked', async () => {
    const store = memoryStore()
    const missing = await store.acknowledge('ann_nope').catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(NotFoundError)
    expect((missing as Error).message).toBe('No annotation with id "ann_nope" exists.')
    expect((missing as NotFoundError).details).toEqual({ kind: 'annotation', id: 'ann_nope' })
    const s = await store.createSession({ url: 'http://x/' })
    const a = await store.addAnnotation({ sessionId: s.id, comment: 'c' })
    for (let i = 0; i < 2_000; i++) await store.reply(a.id, { author: 'agent', message: `m${i}` })
    const expired = (() => {
      try {
        return store.changesSince(0)
      } catch (e) {
        return e
      }
    })()
    expect(expired).toBeInstanceOf(CursorExpiredError)
    expect((expired as Error).message).not.toMatch(/get_|list_/)
    expect((expired as CursorExpiredError).details).toEqual({ sinceRev: 0, oldestRev: store.oldestAvailableRev + 1, currentRev: store.rev })
  })
})

describe('store locations', () => {
  it('a location names its adapter by its prefix; anything else is a file path', () => {
    for (const url of ['postgres://u@127.0.0.1:5432/db', 'postgresql://u@h/db?schema=s', 'POSTGRES://h/db']) expect(locationOf(url)).toBe(POSTGRES_LOCATION)
    for (const file of ['/tmp/x/.marginalia/store.json', 'store.json', 'file:///tmp/x/store.json', 'postgres.json']) expect(locationOf(file)).toBe(FILE_LOCATION)
    expect(isFileLocation('postgres://h/db')).toBe(false)
    expect(isFileLocation('.marginalia/store.json')).toBe(true)
  })

  it('a url no adapter claims is refused, naming the prefixes there are', async () => {
    await expect(openStore({ url: 'ftp://h/store' })).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('must start with postgres:// or file:') })
  })

  it('the contract suite runs against every adapter a location can name', () => {
    expect(STORE_LOCATIONS.map((l) => l.name).filter((name) => !CONTRACT_ADAPTERS.some((a) => a.name === name))).toEqual([])
  })

  it('a store keeps attachments where its adapter says (blobStore), unless the caller chose', async () => {
    const own = new MemoryBlobStore()
    const chosen = new MemoryBlobStore()
    class WithBlobs extends MemoryAdapter {
      blobStore() {
        return own
      }
    }
    expect(new Store(new WithBlobs(), { snapshot: null, events: [] }).blobs).toBe(own)
    expect(new Store(new WithBlobs(), { snapshot: null, events: [] }, { blobs: chosen }).blobs).toBe(chosen)
    const { dir, file } = testDir(cleanups)
    const store = await openStore({ adapter: new FileAdapter({ file, watchFiles: false, pollIntervalMs: 0 }) })
    cleanups.push(() => store.close())
    expect(store.blobs.location).toBe(path.join(dir, '.marginalia', 'attachments'))
  })
})
