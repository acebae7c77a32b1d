/**
 * A whole session from a shell, as processes: `marginalia watch` prints what the person files,
 * then `ack`, `reply`, `resolve` close it — on the project's file store, and against a running
 * server with --url. And the Claude Code plugin's monitor command, as init writes it: silent in a
 * project with no store, then each new annotation once.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openStore } from '../../../src/index.js'
import { CLI, runCli, startServeCli } from '../../helpers/cli.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { spawnNode } from '../../helpers/process.js'
import { annotate, makeProject } from './lib.js'

const cleanups = useCleanups()
const NO_ENV = { MARGINALIA_STORE: '', MARGINALIA_TOKEN: '', DATABASE_URL: '' }

interface Line {
  id: string
  comment: string
  url: string | null
  location: string | null
  component: string | null
  status: string
  prompt: string
}
const lines = (text: string): Line[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Line)

describe('marginalia watch, ack, reply, resolve as processes', () => {
  it('on the project\'s file store: each pending annotation printed once, then worked to resolved', { timeout: 120_000 }, async () => {
    const p = makeProject(cleanups)
    const first = await annotate(p.store, 'Make the header sticky')
    const watch = spawnNode(cleanups, [CLI, 'watch'], { cwd: p.root, env: NO_ENV })
    await watch.waitFor('stdout', first)
    const second = await annotate(p.store, 'Footer is grey on grey', { file: 'src/Footer.tsx', line: 3, component: 'Footer' })
    await watch.waitFor('stdout', second)
    const [a, b] = lines(watch.stdout())
    expect(a).toMatchObject({ id: first, comment: 'Make the header sticky', url: 'http://localhost:5173/', location: 'src/App.tsx:12', component: 'App', status: 'pending' })
    expect(a!.prompt).toContain(`marginalia ack ${first}`)
    expect(b).toMatchObject({ id: second, location: 'src/Footer.tsx:3', component: 'Footer' })

    const list = await runCli(['list', '--json'], p.root)
    expect((JSON.parse(list.stdout) as Line[]).map((i) => i.id)).toEqual([first, second])
    expect((await runCli(['ack', first, 'on it'], p.root)).stdout).toContain(`${first} acknowledged`)
    expect((await runCli(['reply', first, 'sticky at the top, right?'], p.root)).code).toBe(0)
    const resolved = await runCli(['resolve', first, 'position: sticky on the header', '--json'], p.root)
    expect((JSON.parse(resolved.stdout) as { annotation: { status: string } }).annotation.status).toBe('resolved')
    // A third one lands: printed; the first two are never printed again.
    const third = await annotate(p.store, 'Logo too small')
    await watch.waitFor('stdout', third)
    expect(lines(watch.stdout()).map((l) => l.id)).toEqual([first, second, third])

    const store = await openStore({ file: p.store })
    cleanups.push(() => store.close())
    const record = store.getAnnotation(first)
    expect(record.status).toBe('resolved')
    expect(record.replies.map((r) => r.message)).toEqual(['on it', 'sticky at the top, right?', 'position: sticky on the header'])
    // The tools' own errors, with their code; a usage mistake exits 2.
    const missing = await runCli(['ack', 'ann_nope'], p.root)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('NOT_FOUND')
    expect((await runCli(['dismiss', second], p.root)).code).toBe(2)
  })

  it('against a running server with --url', { timeout: 120_000 }, async () => {
    const p = makeProject(cleanups)
    const serve = await startServeCli(cleanups, p.root)
    const watch = spawnNode(cleanups, [CLI, 'watch', '--url', serve.url], { cwd: p.root, env: NO_ENV })
    // The person, through the server's REST API as the overlay does.
    const post = async (route: string, body: object): Promise<{ id: string }> => {
      const res = await fetch(`${serve.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      expect(res.status, await res.clone().text()).toBe(201)
      return (await res.json()) as { id: string }
    }
    const session = await post('/api/sessions', { url: 'http://localhost:5173/' })
    const { id } = await post(`/api/sessions/${session.id}/annotations`, { comment: 'Bigger button', url: 'http://localhost:5173/' })
    await watch.waitFor('stdout', id)
    expect(lines(watch.stdout())).toHaveLength(1)
    for (const args of [['ack', id], ['reply', id, 'how big?'], ['resolve', id, 'doubled the padding']]) {
      const r = await runCli([...args, '--url', serve.url], p.root)
      expect(r.code, r.stderr).toBe(0)
    }
    const shown = await runCli(['show', id, '--url', serve.url, '--json'], p.root)
    const record = (JSON.parse(shown.stdout) as { annotation: { status: string; replies: { message: string }[] } }).annotation
    expect(record.status).toBe('resolved')
    expect(record.replies.map((r) => r.message)).toEqual(['how big?', 'doubled the padding'])
  })
})

describe('the Claude Code plugin monitor', () => {
  it('is silent where the project has no store, then prints each new annotation once; --once returns after the first batch', { timeout: 120_000 }, async () => {
    const p = makeProject(cleanups)
    const init = await runCli(['init', '--yes', '--agent', 'claude', '--home-config', '--dir', p.root], p.root, { HOME: p.home })
    expect(init.code, init.stderr).toBe(0)
    const monitors = JSON.parse(readFileSync(path.join(p.home, '.claude', 'skills', 'marginalia', 'monitors', 'monitors.json'), 'utf8')) as { name: string; command: string; description: string }[]
    expect(monitors).toEqual([{ name: expect.any(String), command: expect.stringContaining('watch --as claude --if-present'), description: expect.any(String) }])
    const plugin = JSON.parse(readFileSync(path.join(p.home, '.claude', 'skills', 'marginalia', '.claude-plugin', 'plugin.json'), 'utf8')) as { name: string }
    expect(plugin.name).toBe('marginalia')
    // The command as Claude Code runs it: through a shell, in the session's working directory.
    const monitor = spawnNode(cleanups, ['-e', `require('node:child_process').spawn('sh', ['-c', ${JSON.stringify(monitors[0]!.command)}], { stdio: 'inherit' })`], { cwd: path.join(p.root), env: NO_ENV, group: true })
    const id = await annotate(p.store, 'Spacing under the title')
    await monitor.waitFor('stdout', id, 20_000)
    const next = await annotate(p.store, 'Wrong icon')
    await monitor.waitFor('stdout', next)
    expect(lines(monitor.stdout()).map((l) => l.id)).toEqual([id, next])
    expect(monitor.stderr()).toBe('')
    // What the monitor told the session, a hook of that agent does not tell again.
    const told = JSON.parse(readFileSync(path.join(p.root, '.marginalia', 'told.json'), 'utf8')) as { sessions: Record<string, { ids: string[] }> }
    expect(told.sessions['claude:*']!.ids).toEqual([id, next])

    const once = await runCli(['watch', '--once'], p.root)
    expect(lines(once.stdout).map((l) => l.id)).toEqual([id, next])
  })
})
