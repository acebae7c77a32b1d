/**
 * `npm ci && npm start` must serve the overlay and the inbox: the bundled CLI (dist/marginalia.mjs)
 * finds dist/overlay/ and serves /overlay.js and the inbox at /.
 */
import { describe, expect, it } from 'vitest'
import { request } from '../helpers/http.js'
import { testDir } from '../helpers/store.js'
import { startServeCli } from '../helpers/cli.js'
import { useCleanups } from '../helpers/cleanup.js'

const cleanups = useCleanups()

describe('built CLI serves the browser assets', () => {
  it('GET /overlay.js is the overlay and / is the inbox, from any working directory', { timeout: 30_000 }, async () => {
    const { dir } = testDir(cleanups)
    const { url } = await startServeCli(cleanups, dir)
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
