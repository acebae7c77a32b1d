import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openStore } from '../../../src/index.js'
import { tempDir } from '../../helpers/store.js'
import { solidPng } from '../../helpers/png.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const WRITER = path.resolve(import.meta.dirname, 'fixtures/attach-writer.mjs')

/** Run the writer until it printed `until`, then SIGKILL it. Resolves to its stdout lines. */
function runAndKill(file: string, mode: 'hold' | 'race', png: Buffer, until: RegExp): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, file, mode], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PNG_B64: png.toString('base64') } })
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      if (until.test(out)) child.kill('SIGKILL')
    })
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    child.on('error', reject)
    child.on('exit', (_code, signal) => {
      clearTimeout(timer)
      if (signal !== 'SIGKILL') reject(new Error(`writer exited on its own: ${err}`))
      else resolve(out.trim().split('\n'))
    })
  })
}

describe('crash between the attachment write and the commit', () => {
  it('kill -9 after the blob is durable and before the annotation commits: reopen finds an orphan, never a dangling reference; gc removes it', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const lines = await runAndKill(t.file, 'hold', solidPng(4, 4, [1, 2, 3]), /^blob /m)
    const sha = lines.find((l) => l.startsWith('blob '))!.slice(5)
    expect(existsSync(path.join(t.dir, '.marginalia', 'attachments', `${sha}.png`))).toBe(true)
    const store = await openStore({ file: t.file, lockStaleMs: 1 })
    cleanups.push(() => store.close())
    expect(store.listAnnotations().length).toBe(0)
    expect((await store.gcAttachments({ graceMs: 0 })).removed).toEqual([sha])
  }, 30_000)

  it('kill -9 right after the commit: every referenced blob is on disk', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    await runAndKill(t.file, 'race', solidPng(5, 5, [9, 9, 9]), /^committed /m)
    const store = await openStore({ file: t.file, lockStaleMs: 1 })
    cleanups.push(() => store.close())
    const annotations = store.listAnnotations()
    expect(annotations.length).toBe(1)
    for (const a of annotations) for (const att of a.attachments ?? []) expect(await store.blobs.has(att.sha256)).toBe(true)
  }, 30_000)
})
