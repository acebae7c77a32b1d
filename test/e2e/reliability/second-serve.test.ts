/**
 * A second `marginalia serve` on a port another server holds must not touch the store that server
 * is using: it exits 1 with the reason before opening the store — no lock taken, no snapshot
 * written, no log compacted on its way out.
 */
import { describe, expect, it } from 'vitest'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { CLI, startServeCli } from '../../helpers/cli.js'
import { request } from '../../helpers/http.js'
import { testDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { spawnNode } from '../../helpers/process.js'
import { until } from '../../helpers/eventually.js'

const cleanups = useCleanups()

/** Every file of the store's folder: name, size, mtime and content. */
function snapshotOf(dir: string): Record<string, { size: number; mtimeMs: number; text: string }> {
  return Object.fromEntries(
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .map((f) => path.join(dir, f))
      .filter((f) => statSync(f).isFile())
      .sort()
      .map((f) => [path.relative(dir, f), { size: statSync(f).size, mtimeMs: statSync(f).mtimeMs, text: readFileSync(f, 'utf8') }]),
  )
}

describe('a second serve that cannot bind its port', () => {
  it('exits 1 saying the port is in use, and leaves the live store byte for byte as it was', async () => {
    const { dir } = testDir(cleanups, 'marginalia-second-serve-')
    const store = path.join(dir, 'data', 'store.json')
    const first = await startServeCli(cleanups, dir, ['--store', store])
    const session = await request(`${first.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })
    expect(session.status).toBe(201)
    for (let i = 0; i < 5; i++) {
      const r = await request(`${first.url}/api/sessions/${(session.json as { id: string }).id}/annotations`, { method: 'POST', body: { comment: `note ${i}` } })
      expect(r.status).toBe(201)
    }
    // The first server lets go of its lock just after it answers: the store at rest is what must not change.
    await until(() => !existsSync(`${store}.lock`), 'the first server to release its lock')
    const before = snapshotOf(path.dirname(store))
    expect(Object.keys(before).length).toBeGreaterThan(0)

    const port = new URL(first.url).port
    const second = spawnNode(cleanups, [CLI, 'serve', '--port', port, '--store', store], { cwd: dir, env: { MARGINALIA_STORE: '', MARGINALIA_TOKEN: '' } })
    expect(await second.exited()).toBe(1)
    expect(second.stderr()).toContain(`port ${port} on 127.0.0.1 is already in use`)
    expect(snapshotOf(path.dirname(store))).toEqual(before)
    // The first server goes on.
    expect((await request(`${first.url}/api/annotations`)).status).toBe(200)
  }, 30_000)
})
