/**
 * `npm ci && npm start` must serve the overlay and the inbox: the bundled CLI (dist/marginalia.mjs)
 * finds dist/overlay/ and serves /overlay.js and the inbox at /.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { request } from '../helpers/http.js'
import { tempDir } from '../helpers/store.js'

const CLI = path.resolve(import.meta.dirname, '../../dist/marginalia.mjs')
const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('built CLI serves the browser assets', () => {
  it('GET /overlay.js is the overlay and / is the inbox, from any working directory', { timeout: 30_000 }, async () => {
    const { dir, cleanup } = tempDir()
    cleanups.push(cleanup)
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], { cwd: dir, env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_TOKEN: '' } })
    cleanups.push(() => child.kill('SIGKILL'))
    let stderr = ''
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed; stderr: ${stderr}`)), 15_000)
      child.stderr.on('data', (d: Buffer) => {
        stderr += d
        const m = /URL:\s+(http:\/\/\S+?)\/(\s|$)/.exec(stderr)
        if (m && stderr.includes('Connect Claude Code')) {
          clearTimeout(timer)
          resolve(m[1]!)
        }
      })
      child.on('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`exited ${code}: ${stderr}`))
      })
    })
    const js = await request(`${url}/overlay.js`, { headers: { Origin: 'http://localhost:5173' } })
    expect(js.status).toBe(200)
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(js.text).toContain('Marginalia')
    expect(js.text).toContain('attachShadow')
    const inbox = await request(`${url}/`)
    expect(inbox.status).toBe(200)
    expect(inbox.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(inbox.text).toContain('<title>Marginalia · Inbox</title>')
    expect(inbox.text).toContain('src="inbox.js"')
    expect((await request(`${url}/inbox.js`)).status).toBe(200)
  })
})
