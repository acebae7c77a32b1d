/**
 * `marginalia reset` is the supported way to empty the inbox: it works while `serve`
 * runs — the server's live stream sees every annotation go, revs go on, the server keeps taking
 * writes, and after a kill -9 the store opens without the deleted annotations and with what came
 * after. It asks before deleting (and refuses without --yes outside a terminal). A store that
 * cannot be opened is moved aside with --move-aside, never silently.
 */
import { describe, expect, it } from 'vitest'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { openStore } from '../../../src/index.js'
import { runCli, startServeCli } from '../../helpers/cli.js'
import { SseClient, request } from '../../helpers/http.js'
import { testDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

describe('marginalia reset', () => {
  it('empties the inbox while serve runs: the live stream sees each annotation go, revs go on, nothing comes back after a crash', async () => {
    const { dir } = testDir(cleanups, 'marginalia-reset-')
    const store = path.join(dir, '.marginalia', 'store.json')
    const server = await startServeCli(cleanups, dir, ['--store', store])
    const session = await request(`${server.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })
    const sessionId = (session.json as { id: string }).id
    const ids: string[] = []
    for (let i = 0; i < 4; i++) {
      const r = await request(`${server.url}/api/sessions/${sessionId}/annotations`, { method: 'POST', body: { comment: `note ${i}` } })
      ids.push((r.json as { id: string }).id)
    }
    const events = await SseClient.open(`${server.url}/api/events`, { 'Last-Event-ID': '5' })
    cleanups.push(() => events.close())

    // Not in a terminal and no --yes: refused, nothing deleted.
    const refused = await runCli(['reset', '--store', store], dir)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/pass --yes/)
    expect(((await request(`${server.url}/api/sessions/${sessionId}`)).json as { annotations: unknown[] }).annotations).toHaveLength(4)

    const done = await runCli(['reset', '--yes', '--store', store], dir)
    expect(done.stderr).toMatch(/deleted 4 annotation\(s\); the store goes on at rev 9/)
    expect(done.code).toBe(0)
    // The running server's stream: one annotation.deleted per annotation, revs 6…9.
    await events.until((es) => es.some((e) => e.id === '9'))
    const deleted = events.events.filter((e) => e.event === 'annotation.deleted')
    expect(deleted.map((e) => e.id)).toEqual(['6', '7', '8', '9'])
    expect(((await request(`${server.url}/api/sessions/${sessionId}`)).json as { annotations: unknown[] }).annotations).toHaveLength(0)

    // The server goes on: the next write is rev 10, on the same session.
    const after = await request(`${server.url}/api/sessions/${sessionId}/annotations`, { method: 'POST', body: { comment: 'after the reset' } })
    expect(after.status).toBe(201)
    await events.until((es) => es.some((e) => e.id === '10'))

    // kill -9: the store opens with what came after, and none of the deleted annotations.
    server.child.kill('SIGKILL')
    await new Promise((r) => server.child.once('exit', r))
    const reopened = await openStore({ file: store })
    cleanups.push(() => reopened.close())
    expect(reopened.rev).toBe(10)
    expect(reopened.listAnnotations({}).map((a) => a.comment)).toEqual(['after the reset'])
    for (const id of ids) expect(() => reopened.getAnnotation(id)).toThrow(/No annotation with id/)

    // Nothing to reset: says so, exit 0.
    await reopened.clearAnnotations()
    const empty = await runCli(['reset', '--yes', '--store', store], dir)
    expect(empty.code).toBe(0)
    expect(empty.stderr).toMatch(/has no annotations; nothing to reset/)
  }, 60_000)

  it('a store that cannot be opened: reset says so and points at --move-aside, which moves its files and starts empty', async () => {
    const { dir } = testDir(cleanups, 'marginalia-reset-broken-')
    const store = path.join(dir, '.marginalia', 'store.json')
    const s = await openStore({ file: store })
    await s.createSession({ url: 'http://localhost/' })
    await s.close()
    writeFileSync(store, '{"format":"marginalia-store", oops')

    const plain = await runCli(['reset', '--yes', '--store', store], dir)
    expect(plain.code).toBe(1)
    expect(plain.stderr).toMatch(/not valid JSON[\s\S]*marginalia reset --move-aside/)

    const healthy = path.join(dir, 'ok', 'store.json')
    const ok = await openStore({ file: healthy })
    await ok.createSession({ url: 'http://localhost/' })
    await ok.close()
    const notBroken = await runCli(['reset', '--move-aside', '--yes', '--store', healthy], dir)
    expect(notBroken.code).toBe(2)
    expect(notBroken.stderr).toMatch(/opens fine/)

    const moved = await runCli(['reset', '--move-aside', '--yes', '--store', store], dir)
    expect(moved.code).toBe(0)
    const broken = readdirSync(path.join(dir, '.marginalia')).filter((n) => n.startsWith('broken-'))
    expect(broken).toHaveLength(1)
    expect(readdirSync(path.join(dir, '.marginalia', broken[0]!))).toContain('store.json')
    expect(existsSync(store)).toBe(false)
    const fresh = await openStore({ file: store })
    cleanups.push(() => fresh.close())
    expect(fresh.rev).toBe(0)
  }, 60_000)
})
