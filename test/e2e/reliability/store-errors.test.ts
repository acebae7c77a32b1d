/**
 * Store errors reach REST clients with a status and code they can
 * act on (busy 503 + Retry-After, disk full 507, read-only 503 — never a masked 500), session and
 * annotation URLs are http(s) only, and duplicate Host headers are refused.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openStore, startHttpServer } from '../../../src/index.js'
import { StoreBusyError, StoreUnavailableError } from '../../../src/store/errors.js'
import { StoreFileError } from '../../../src/store/fs/errors.js'
import { toErrorResponse } from '../../../src/http/respond.js'
import { memoryStore, testDir } from '../../helpers/store.js'
import { rawExchange } from './lib/raw.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const errno = (code: string) => Object.assign(new Error(`${code}: failed`), { code })

describe('store errors over REST', () => {
  const logged: string[] = []
  const log = (m: string) => logged.push(m)

  it('STORE_BUSY is 503 with Retry-After and the lock holder, and names no MCP tool', () => {
    const r = toErrorResponse(new StoreBusyError('/s/store.json', 2_000, { pid: 4242, host: 'box', since: '2026-01-01T00:00:00.000Z' }), log)
    expect(r.status).toBe(503)
    expect(r.headers['Retry-After']).toBe('1')
    expect(r.body.error.code).toBe('STORE_BUSY')
    expect(r.body.error.details).toMatchObject({ holder: { pid: 4242, host: 'box' } })
    expect(r.body.error.message).toMatch(/process 4242 on box/)
    expect(r.body.error.message).not.toMatch(/_(pending|changes|annotation)|tool/)
  })

  it('a full disk is 507 STORE_FILE with the reason; a read-only store file 503; others 500 STORE_FILE, none masked', () => {
    const full = toErrorResponse(new StoreFileError('/s/store.events.jsonl', 'could not write (ENOSPC: no space left on device); nothing of this change was saved', { cause: errno('ENOSPC') }), log)
    expect(full.status).toBe(507)
    expect(full.body.error).toMatchObject({ code: 'STORE_FILE', message: expect.stringMatching(/no space left/) })
    const ro = toErrorResponse(new StoreFileError('/s/store.json', 'is read-only (EACCES); nothing was written.', { cause: errno('EACCES') }), log)
    expect(ro.status).toBe(503)
    expect(ro.body.error.code).toBe('STORE_FILE')
    const other = toErrorResponse(new StoreFileError('/s/store.json', 'line 3 is not valid JSON'), log)
    expect(other.status).toBe(500)
    expect(other.body.error.code).toBe('STORE_FILE')
    const down = toErrorResponse(new StoreUnavailableError('postgres://db/marginalia', 'the database does not answer'), log)
    expect(down.status).toBe(503)
    expect(down.body.error.code).toBe('STORE_UNAVAILABLE')
    expect(logged).toEqual([])
  })
})

describe('URLs the inbox renders as links', () => {
  it.each(['javascript:alert(1)', 'data:text/html,<b>x</b>', 'file:///etc/passwd', 'not a url'])('a session or annotation URL %s is refused, naming the field', async (url) => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    await expect(store.createSession({ url })).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringMatching(/url: must be an absolute http: or https: URL/) })
    const s = await store.createSession({ url: 'https://example.test/app' })
    await expect(store.addAnnotation({ sessionId: s.id, comment: 'c', url })).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringMatching(/url/) })
    await expect(store.addAnnotation({ sessionId: s.id, comment: 'c', url: 'http://localhost:5173/x' })).resolves.toMatchObject({ comment: 'c' })
  })
})

it('duplicate Host headers are refused', async () => {
  const store = memoryStore()
  const server = await startHttpServer(store, { port: 0 })
  cleanups.push(() => store.close())
  cleanups.push(() => server.close())
  const port = Number(new URL(server.url).port)
  const twice = await rawExchange(port, `GET /api/sessions HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n`)
  expect(twice.status).toBe(400)
  expect(twice.text).toMatch(/2 Host headers/)
  const once = await rawExchange(port, `GET /api/sessions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
  expect(once.status).toBe(200)
})

describe('store paths that can never work are refused at open, naming the cause', () => {
  it('a parent that is a file, and a path under /proc', async () => {
    const { dir } = testDir(cleanups)
    writeFileSync(path.join(dir, 'plain'), 'x')
    await expect(openStore({ file: path.join(dir, 'plain', 'sub', 'store.json') })).rejects.toMatchObject({ code: 'STORE_FILE', message: expect.stringMatching(/plain is a file, not a directory/) })
    await expect(openStore({ file: '/proc/self/store.json' })).rejects.toMatchObject({ code: 'STORE_FILE', message: expect.stringMatching(/kernel file system/) })
  })
})
