/**
 * A repository can commit symbolic links inside `.marginalia/`. Opening or writing the store never
 * follows one: a link (dangling or not) or a non-regular file where the store keeps a file is
 * refused with an error naming it and what to do, the link's target is never created or changed,
 * and the link itself is left in place (never replaced by a regular file, which would hide it).
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openStore, StoreFileError, type Store } from '../../../src/index.js'
import { storeImage } from '../../../src/store/blobs/index.js'
import { DirectoryArchive, archiveFileName } from '../../../src/store/archive/directory.js'
import { announceStdioAgent } from '../../../src/http/presence.js'
import { runCli, startServeCli, type RunningServe } from '../../helpers/cli.js'
import { tempDir } from '../../helpers/store.js'
import { request } from '../../helpers/http.js'
import { solidPng } from '../../helpers/png.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

/** A temp project with `.marginalia/` and an `outside/` folder standing for the user's home. */
function project() {
  const t = tempDir('marginalia-planted-')
  cleanups.push(t.cleanup)
  const store = path.join(t.dir, '.marginalia')
  const outside = path.join(t.dir, 'outside')
  mkdirSync(store)
  mkdirSync(outside)
  return { root: t.dir, store, outside, file: t.file, log: path.join(store, 'store.events.jsonl') }
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Open the store and, if that worked, write once the way the overlay's first request does. */
async function openAndWrite(file: string): Promise<unknown> {
  let store: Store
  try {
    store = await openStore({ file, pollIntervalMs: 0, watchFiles: false })
  } catch (e) {
    return e
  }
  try {
    await store.createSession({ url: 'http://localhost:5173/', name: 'Shop $(touch pwned)' })
    return store
  } catch (e) {
    return e
  } finally {
    await store.close().catch(() => {})
  }
}

function expectRefusal(error: unknown, file: string, what: RegExp): void {
  expect(error).toBeInstanceOf(StoreFileError)
  const message = (error as Error).message
  expect(message).toMatch(new RegExp(`^${escape(file)}: `))
  expect(message).toMatch(what)
  expect(message).toMatch(/remove it.*a cloned repository may have planted it/i)
}

describe('a planted link where the store keeps a file is refused, never written through', () => {
  it('a dangling store.events.jsonl -> ../outside/.bash_profile: open refuses naming the link; the target is never created', async () => {
    const p = project()
    const target = path.join(p.outside, '.bash_profile')
    symlinkSync(path.relative(p.store, target), p.log)
    const result = await openAndWrite(p.file)
    expect(existsSync(target)).toBe(false)
    expectRefusal(result, p.log, new RegExp(`a symbolic link to ${escape(path.relative(p.store, target))}`))
    expect(lstatSync(p.log).isSymbolicLink()).toBe(true) // left in place, not replaced by a file
  })

  it('store.events.jsonl linked to an existing (empty) file: refused, the file untouched byte for byte', async () => {
    const p = project()
    const target = path.join(p.outside, '.bashrc')
    writeFileSync(target, '')
    const before = statSync(target)
    symlinkSync(target, p.log)
    const result = await openAndWrite(p.file)
    expectRefusal(result, p.log, /a symbolic link to /)
    expect(readFileSync(target).length).toBe(0)
    expect(statSync(target).mtimeMs).toBe(before.mtimeMs)
  })

  it('a dangling store.json link: refused; the target is never created and the link is not replaced', async () => {
    const p = project()
    const target = path.join(p.outside, 'profile')
    symlinkSync(target, p.file)
    const result = await openAndWrite(p.file)
    expectRefusal(result, p.file, /a symbolic link to /)
    expect(existsSync(target)).toBe(false)
    expect(readlinkSync(p.file)).toBe(target)
  })

  it('store.json linked to an existing file: refused, the file untouched byte for byte', async () => {
    const p = project()
    const target = path.join(p.outside, 'notes.json')
    const content = JSON.stringify({ format: 'marginalia-store', version: 1, rev: 0, sessions: [], annotations: [], recentEvents: [] })
    writeFileSync(target, content)
    symlinkSync(target, p.file)
    const result = await openAndWrite(p.file)
    expectRefusal(result, p.file, /a symbolic link to /)
    expect(readFileSync(target, 'utf8')).toBe(content)
  })

  it('a planted temp file of the snapshot\'s atomic rename (.store.json.tmp) is never written through', async () => {
    const p = project()
    const target = path.join(p.outside, '.profile')
    writeFileSync(target, 'export PATH=$PATH\n')
    symlinkSync(target, path.join(p.store, '.store.json.tmp'))
    const store = await openStore({ file: p.file, pollIntervalMs: 0, watchFiles: false })
    await store.createSession({ url: 'http://localhost:5173/' })
    await store.close()
    expect(readFileSync(target, 'utf8')).toBe('export PATH=$PATH\n')
    expect(lstatSync(p.file).isFile()).toBe(true) // the snapshot is a regular file of its own
  })

  it('a FIFO (a non-regular file) as the log is refused, naming what it is', async () => {
    const p = project()
    execFileSync('mkfifo', [p.log])
    const result = await openAndWrite(p.file)
    expectRefusal(result, p.log, /is a FIFO/)
  })

  it('.marginalia itself a link to another folder: refused, nothing is created there', async () => {
    const t = tempDir('marginalia-planted-')
    cleanups.push(t.cleanup)
    const outside = path.join(t.dir, 'outside')
    mkdirSync(outside)
    const dir = path.join(t.dir, '.marginalia')
    symlinkSync(outside, dir)
    const result = await openAndWrite(t.file)
    expectRefusal(result, dir, /a symbolic link to /)
    expect(existsSync(path.join(outside, 'store.json'))).toBe(false)
    expect(existsSync(path.join(outside, 'store.events.jsonl'))).toBe(false)
  })

  it('a planted lock (store.json.lock -> elsewhere) is refused naming it', async () => {
    const p = project()
    const target = path.join(p.outside, 'lockdir')
    mkdirSync(target)
    symlinkSync(target, `${p.file}.lock`)
    const result = await openAndWrite(p.file)
    expectRefusal(result, `${p.file}.lock`, /a symbolic link to /)
    expect(existsSync(path.join(target, 'owner.json'))).toBe(false)
  })

  it('a planted archive file link: archiving refuses and the target is untouched', async () => {
    const p = project()
    const dir = path.join(p.store, 'archive')
    mkdirSync(dir)
    const at = '2026-01-02T03:04:05.000Z'
    const target = path.join(p.outside, '.zshrc')
    writeFileSync(target, '# mine\n')
    const planted = path.join(dir, archiveFileName(new Date(at)))
    symlinkSync(target, planted)
    const store = await openStore({ file: p.file, pollIntervalMs: 0, watchFiles: false })
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'x' })
    const result = await new DirectoryArchive(dir).keep(at, [store.getAnnotation(a.id)]).catch((e: unknown) => e)
    expect(readFileSync(target, 'utf8')).toBe('# mine\n')
    expectRefusal(result, planted, /a symbolic link to /)
  })

  it('a planted attachments folder link: an upload is refused and nothing lands in the target folder', async () => {
    const p = project()
    const target = path.join(p.outside, 'pictures')
    mkdirSync(target)
    symlinkSync(target, path.join(p.store, 'attachments'))
    const store = await openStore({ file: p.file, pollIntervalMs: 0, watchFiles: false })
    cleanups.push(() => store.close())
    const result = await storeImage(store.blobs, solidPng(2, 2, [1, 2, 3])).catch((e: unknown) => e)
    expectRefusal(result, path.join(p.store, 'attachments'), /a symbolic link to /)
    expect(readdirSync(target)).toEqual([])
  })

  it('a planted presence file link: a stdio agent announcing itself does not write through it', () => {
    const p = project()
    mkdirSync(path.join(p.store, 'presence'))
    const target = path.join(p.outside, '.bash_login')
    writeFileSync(target, 'mine\n')
    symlinkSync(target, path.join(p.store, 'presence', `${process.pid}.json`))
    const remove = announceStdioAgent(p.store)
    cleanups.push(remove)
    expect(readFileSync(target, 'utf8')).toBe('mine\n')
  })
})

describe('the real CLI refuses a planted dangling log link', () => {
  function planted() {
    const p = project()
    writeFileSync(path.join(p.root, 'package.json'), '{"name":"cloned"}\n')
    const target = path.join(p.outside, '.bash_profile')
    symlinkSync(path.relative(p.store, target), p.log)
    cleanups.push(() => rmSync(target, { force: true }))
    return { ...p, target }
  }

  it('marginalia mcp exits 1 naming the link; the target is never created', async () => {
    const p = planted()
    const run = await runCli(['mcp'], p.root)
    expect(existsSync(p.target)).toBe(false)
    expect(run.stderr).toContain(`${p.log}: is a symbolic link to `)
    expect(run.stderr).toMatch(/cloned repository may have planted it/)
    expect(run.code).toBe(1)
    expect(lstatSync(p.log).isSymbolicLink()).toBe(true)
  })

  it('marginalia serve refuses to start naming the link; the target is never created', async () => {
    const p = planted()
    const started = await startServeCli(cleanups, p.root).catch((e: unknown) => e)
    if (!(started instanceof Error)) {
      // It started: the overlay's first request is what writes to the log.
      await request(`${(started as RunningServe).url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/', name: 'Shop $(id)' } })
    }
    expect(existsSync(p.target)).toBe(false)
    expect(started).toBeInstanceOf(Error)
    expect((started as Error).message).toContain(`${p.log}: is a symbolic link to `)
  })
})
