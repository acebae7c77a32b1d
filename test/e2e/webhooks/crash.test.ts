/**
 * At least once, whatever crashed: a receiver that fails its first five deliveries, a server
 * killed -9 in the middle of delivering and started again, and another process writing to the
 * store all along. Every change arrives, every signature verifies, duplicates stay under 10 %.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { runCleanups, type Cleanups } from '../../helpers/cleanup.js'
import { runCli, startServeCli } from '../../helpers/cli.js'
import { eventually, until } from '../../helpers/eventually.js'
import { startMutator } from '../../helpers/mutator.js'
import { testDir } from '../../helpers/store.js'
import { accepted, startReceiver } from '../../helpers/webhook-receiver.js'
import { annotate, post } from './lib.js'

const cleanups: Cleanups = []
afterEach(() => runCleanups(cleanups))

describe('webhooks survive kill -9 and other writers', () => {
  it('delivers every change, signed, at least once and in order per annotation', { timeout: 180_000 }, async () => {
    const { dir, file } = testDir(cleanups)
    const receiver = await startReceiver((n) => (n < 5 ? 500 : 204))
    cleanups.push(() => receiver.close())
    const first = await startServeCli(cleanups, dir, ['--store', file, '--webhooks-retry', '50'])
    const session = await post<{ id: string }>(first.url, '/api/sessions', { url: 'http://localhost:5173/' })

    const added = await runCli(['webhooks', 'add', receiver.url, '--description', 'crash test', '--store', file], dir)
    expect(added.code, added.stderr).toBe(0)
    receiver.secret = added.stdout.trim()
    expect(receiver.secret).toMatch(/^whsec_/)
    const listed = await runCli(['webhooks', 'list', '--store', file], dir)
    expect(listed.stdout).toContain(receiver.url)
    expect(listed.stdout).not.toContain(receiver.secret)

    // The other process: 20 annotations with an agent reply each (40 changes), then it waits for rev 51.
    const mutator = startMutator(cleanups, file, session.id, 20, 1 + 5 + 40 + 5, 'agent-side')
    await mutator.ready
    mutator.go()
    const before = await annotate(first.url, session.id, 'before the crash', 5)
    await until(() => accepted(receiver).unique.size >= 4, 'a few deliveries through the first server', 60_000)
    first.child.kill('SIGKILL')
    await new Promise((resolve) => first.child.once('exit', resolve))

    const second = await startServeCli(cleanups, dir, ['--store', file, '--webhooks-retry', '50'])
    const after = await annotate(second.url, session.id, 'after the restart', 5)
    const report = await mutator.report

    const expected = 5 + 40 + 5
    await eventually(() => accepted(receiver).unique.size, 90_000).toBe(expected)
    const { unique, duplicates } = accepted(receiver)
    expect(receiver.deliveries.every((d) => d.verified)).toBe(true)
    expect(duplicates).toBeLessThanOrEqual(expected * 0.1)
    const ids = (type: string) => [...unique.values()].filter((d) => d.body.type === type).map((d) => (d.body.data.annotation as { id: string }).id)
    expect(new Set(ids('annotation.created'))).toEqual(new Set([...before, ...after, ...report.mine]))
    expect(new Set(ids('annotation.replied'))).toEqual(new Set(report.mine))
    // Ordered per annotation: each one's created arrived before its reply.
    const order = [...unique.values()].map((d) => `${d.body.type} ${(d.body.data.annotation as { id: string }).id}`)
    for (const id of report.mine) expect(order.indexOf(`annotation.created ${id}`)).toBeLessThan(order.indexOf(`annotation.replied ${id}`))
    // The first five attempts failed and were retried with the same webhook-id.
    expect(receiver.deliveries.slice(0, 6).map((d) => d.id)).toEqual(Array(6).fill(receiver.deliveries[0]!.id))

    const log = await fetch(`${second.url}/api/webhooks`).then((r) => r.json() as Promise<{ endpoints: { id: string; status: string; cursor: number }[] }>)
    expect(log.endpoints).toHaveLength(1)
    expect(JSON.stringify(log)).not.toContain(receiver.secret)
    const attempts = await fetch(`${second.url}/api/webhooks/${log.endpoints[0]!.id}/attempts`).then((r) => r.json() as Promise<{ attempts: { ok: boolean; latencyMs: number }[] }>)
    expect(attempts.attempts.length).toBeGreaterThan(0)
  })

  it('refuses bad targets with a clear error, from the CLI and over REST', { timeout: 60_000 }, async () => {
    const { dir, file } = testDir(cleanups)
    const metadata = await runCli(['webhooks', 'add', 'http://169.254.169.254/latest/meta-data', '--store', file], dir)
    expect(metadata.code).toBe(2)
    expect(metadata.stderr).toMatch(/url: 169\.254\.169\.254 is a link-local, metadata, multicast or unspecified address; webhooks never go there/)
    const scheme = await runCli(['webhooks', 'add', 'ftp://example.com/', '--store', file], dir)
    expect(scheme.stderr).toMatch(/url: only http and https are delivered to \(got ftp:\)/)
    const events = await runCli(['webhooks', 'add', 'http://127.0.0.1:9/', '--events', 'annotation.created,nope', '--store', file], dir)
    expect(events.stderr).toMatch(/events: unknown type nope; choose from/)

    // A team server (bound beyond loopback) refuses private targets unless told otherwise.
    const team = await startServeCli(cleanups, dir, ['--store', file, '--host', '0.0.0.0', '--token', 'secret-token-for-the-test'])
    const res = await fetch(`${team.url}/api/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer secret-token-for-the-test' }, body: JSON.stringify({ url: 'http://10.0.0.7/hook' }) })
    expect(res.status).toBe(400)
    const body = (await res.json()) as { error: { message: string; details: { field: string } } }
    expect(body.error.message).toMatch(/url: 10\.0\.0\.7 is a private or loopback address; .* --webhooks-allow-private/)
    expect(body.error.details.field).toBe('url')
    const list = await runCli(['webhooks', 'list', '--store', file], dir)
    expect(list.stdout).toContain('no webhook endpoints yet')
  })
})
