/** The built assets as the server sends them: compressed as the browser accepts, validated by ETag, cached a year only when the name is content-hashed. */
import { mkdirSync, writeFileSync } from 'node:fs'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import path from 'node:path'
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../../src/store/index.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { serve } from '../../helpers/http.js'
import { testDir } from '../../helpers/store.js'

const cleanups = useCleanups()

/** A GET whose body is kept as bytes (the shared helper reads text). */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, timeout: 5_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)))
    req.on('error', reject)
    req.end()
  })
}

async function server(files: Record<string, string | Buffer>): Promise<string> {
  const { dir } = testDir(cleanups)
  for (const [name, bytes] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    writeFileSync(path.join(dir, name), bytes)
  }
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  return (await serve(store, cleanups, { staticDir: dir })).url
}

const SCRIPT = `/* core */ ${'window.x = function () { return "a repeated line of script"; };\n'.repeat(200)}`

describe('serving the overlay assets', () => {
  it('sends brotli, else gzip, else the bytes as they are, by Accept-Encoding, with Vary and a strong ETag per coding', async () => {
    const url = await server({ 'overlay.js': SCRIPT })
    const br = await get(`${url}/overlay.js`, { 'Accept-Encoding': 'gzip, deflate, br' })
    expect(br.status).toBe(200)
    expect(br.headers['content-encoding']).toBe('br')
    expect(br.headers.vary).toMatch(/Accept-Encoding/)
    expect(br.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(Number(br.headers['content-length'])).toBe(br.body.length)
    expect(br.body.length).toBeLessThan(SCRIPT.length / 10)
    expect(brotliDecompressSync(br.body).toString()).toBe(SCRIPT)

    const gz = await get(`${url}/overlay.js`, { 'Accept-Encoding': 'gzip' })
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(gz.body).toString()).toBe(SCRIPT)

    const plain = await get(`${url}/overlay.js`, { 'Accept-Encoding': 'br;q=0, gzip;q=0' })
    expect(plain.headers['content-encoding']).toBeUndefined()
    expect(plain.body.toString()).toBe(SCRIPT)

    const tags = [br, gz, plain].map((r) => r.headers.etag)
    for (const tag of tags) expect(tag).toMatch(/^"[\w-]+"$/) // strong: no W/
    expect(new Set(tags).size).toBe(3)
  })

  it('answers 304 without a body to a matching If-None-Match, and 200 once the file changed', async () => {
    const { dir } = testDir(cleanups)
    writeFileSync(path.join(dir, 'loader.js'), SCRIPT)
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const url = (await serve(store, cleanups, { staticDir: dir })).url
    const first = await get(`${url}/loader.js`, { 'Accept-Encoding': 'br' })
    expect(first.headers['cache-control']).toBe('no-cache')
    const again = await get(`${url}/loader.js`, { 'Accept-Encoding': 'br', 'If-None-Match': first.headers.etag! })
    expect(again.status).toBe(304)
    expect(again.body.length).toBe(0)
    expect(again.headers.etag).toBe(first.headers.etag)
    // Another coding's tag is another representation.
    expect((await get(`${url}/loader.js`, { 'Accept-Encoding': 'gzip', 'If-None-Match': first.headers.etag! })).status).toBe(200)
    writeFileSync(path.join(dir, 'loader.js'), `${SCRIPT}\n// changed, longer`)
    const changed = await get(`${url}/loader.js`, { 'Accept-Encoding': 'br', 'If-None-Match': first.headers.etag! })
    expect(changed.status).toBe(200)
    expect(changed.headers.etag).not.toBe(first.headers.etag)
  })

  it('caches content-hashed chunks a year (immutable) and stable names not at all without asking', async () => {
    const url = await server({ 'chunks/composer-ABCD2345.js': SCRIPT, 'overlay.js': SCRIPT, 'chunks/notes.js': SCRIPT })
    expect((await get(`${url}/chunks/composer-ABCD2345.js`)).headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect((await get(`${url}/overlay.js`)).headers['cache-control']).toBe('no-cache')
    expect((await get(`${url}/chunks/notes.js`)).headers['cache-control']).toBe('no-cache')
  })

  it('sends the precompressed sibling written at build time', async () => {
    const marked = gzipSync(`${SCRIPT}// the sibling`)
    const url = await server({ 'overlay.js': SCRIPT, 'overlay.js.gz': marked })
    const gz = await get(`${url}/overlay.js`, { 'Accept-Encoding': 'gzip' })
    expect(gz.body.equals(marked)).toBe(true)
  })

  it('leaves small files and images as they are', async () => {
    const url = await server({ 'tiny.js': 'x()', 'pic.png': Buffer.alloc(4096, 7) })
    for (const name of ['tiny.js', 'pic.png']) {
      const r = await get(`${url}/${name}`, { 'Accept-Encoding': 'br, gzip' })
      expect(r.status).toBe(200)
      expect(r.headers['content-encoding']).toBeUndefined()
      expect(r.headers.etag).toMatch(/^"[\w-]+"$/)
    }
  })
})
