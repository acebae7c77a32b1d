import { existsSync, readdirSync, utimesSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openStore, type Annotation, type Session } from '../../../src/index.js'
import { FileBlobStore, sniffImage, storeImage } from '../../../src/store/blobs/index.js'
import { memoryStore, tempDir } from '../../helpers/store.js'
import { request, serve } from '../../helpers/http.js'
import { solidPng } from '../../helpers/png.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const RED = solidPng(8, 6, [255, 0, 0])

describe('sniffing images from their bytes', () => {
  it('knows PNG, JPEG, GIF and WebP with their size, and nothing else', () => {
    expect(sniffImage(RED)).toEqual({ mime: 'image/png', width: 8, height: 6 })
    const gif = Buffer.from('GIF89a\x03\x00\x02\x00', 'latin1')
    expect(sniffImage(gif)).toEqual({ mime: 'image/gif', width: 3, height: 2 })
    // A baseline JPEG header: SOI, APP0 (length 16), SOF0 with 5 × 7.
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, ...Array<number>(14).fill(0), 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x07, 0x00, 0x05, 0x03, 0, 0, 0])
    expect(sniffImage(jpeg)).toEqual({ mime: 'image/jpeg', width: 5, height: 7 })
    const webp = Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBPVP8X', 'latin1'), Buffer.alloc(8), Buffer.from([9, 0, 0, 4, 0, 0])])
    expect(sniffImage(webp)).toEqual({ mime: 'image/webp', width: 10, height: 5 })
    expect(sniffImage(Buffer.from('<html><script>alert(1)</script>'))).toBeUndefined()
    expect(sniffImage(Buffer.from('%PDF-1.7'))).toBeUndefined()
  })
})

describe('attachments in the store', () => {
  it('a file store keeps the bytes as .marginalia/attachments/<sha256>.png and the record on the annotation and reply', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const store = await openStore({ file: t.file })
    cleanups.push(() => store.close())
    const stored = await storeImage(store.blobs, RED)
    expect(existsSync(path.join(t.dir, '.marginalia', 'attachments', `${stored.sha256}.png`))).toBe(true)
    const session = await store.createSession({ url: 'http://localhost/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'red', attachments: [{ id: 'att1', kind: 'screenshot', ...stored }] })
    const r = await store.reply(a.id, { author: 'human', message: 'like this', attachments: [{ id: 'att2', kind: 'image', ...stored }] })
    expect(r.attachments).toEqual([{ id: 'att1', kind: 'screenshot', ...stored }])
    expect(r.replies[0]!.attachments?.[0]?.kind).toBe('image')
    // Not inlined in the log: the store file holds the record, never the bytes.
    await store.close()
    const reopened = await openStore({ file: t.file })
    cleanups.push(() => reopened.close())
    expect(reopened.getAnnotation(a.id).attachments?.[0]?.sha256).toBe(stored.sha256)
    expect(Buffer.from((await reopened.blobs.get(stored.sha256))!.bytes).equals(RED)).toBe(true)
  })

  it('refuses a reference to a blob that was never written, and oversize lists, naming the field; nothing is stored', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://localhost/' })
    const att = { id: 'a', kind: 'image' as const, mime: 'image/png' as const, bytes: 10, width: 1, height: 1, sha256: 'a'.repeat(64) }
    await expect(store.addAnnotation({ sessionId: session.id, comment: 'x', attachments: [att] })).rejects.toThrow(/annotation\.attachments\.0\.sha256: no attachment/)
    const stored = await storeImage(store.blobs, RED)
    const ok = { ...att, ...stored }
    await expect(store.addAnnotation({ sessionId: session.id, comment: 'x', attachments: Array<typeof ok>(7).fill(ok) })).rejects.toThrow(/attachments.*at most 6/)
    await expect(store.addAnnotation({ sessionId: session.id, comment: 'x', attachments: [{ ...ok, bytes: 6 * 1024 * 1024 }] })).rejects.toThrow(/attachments\.0\.bytes/)
    await expect(
      store.addAnnotation({ sessionId: session.id, comment: 'x', context: { entries: Array(21).fill({ kind: 'network', at: new Date().toISOString(), message: 'x' }) } }),
    ).rejects.toThrow(/context\.entries.*at most 20/)
    expect(store.countPending()).toBe(0)
  })

  it('gc removes orphans older than the grace period and keeps referenced and fresh blobs', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const store = await openStore({ file: t.file })
    cleanups.push(() => store.close())
    const kept = await storeImage(store.blobs, RED)
    const orphan = await storeImage(store.blobs, solidPng(2, 2, [0, 0, 255]))
    const fresh = await storeImage(store.blobs, solidPng(3, 3, [0, 255, 0]))
    const session = await store.createSession({ url: 'http://localhost/' })
    await store.addAnnotation({ sessionId: session.id, comment: 'x', attachments: [{ id: 'k', kind: 'image', ...kept }] })
    const dir = path.join(t.dir, '.marginalia', 'attachments')
    const old = new Date(Date.now() - 2 * 3600_000)
    for (const f of readdirSync(dir)) if (!f.startsWith(fresh.sha256)) utimesSync(path.join(dir, f), old, old)
    const result = await store.gcAttachments()
    expect(result.removed).toEqual([orphan.sha256])
    expect(readdirSync(dir).sort()).toEqual([`${fresh.sha256}.png`, `${kept.sha256}.png`].sort())
  })
})

describe('REST: /api/attachments', () => {
  async function setup() {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const api = (p: string) => `${server.url}${p}`
    return { store, api }
  }

  it('raw upload → 201 with the record; GET serves it back with its type, nosniff and a disposition; an annotation references it', async () => {
    const { api } = await setup()
    const up = await request(api('/api/attachments'), { method: 'POST', headers: { 'Content-Type': 'image/png' }, body: RED })
    expect(up.status).toBe(201)
    expect(up.json).toMatchObject({ mime: 'image/png', bytes: RED.length, width: 8, height: 6 })
    const got = await request(api(`/api/attachments/${up.json.sha256}`))
    expect(got.status).toBe(200)
    expect(got.headers['content-type']).toBe('image/png')
    expect(got.headers['x-content-type-options']).toBe('nosniff')
    expect(got.headers['content-disposition']).toMatch(/^inline; filename="[0-9a-f]{64}\.png"$/)
    const session = (await request(api('/api/sessions'), { method: 'POST', body: { url: 'http://localhost/' } })).json as Session
    const { url: _url, ...record } = up.json as Record<string, unknown>
    const created = await request(api(`/api/sessions/${session.id}/annotations`), { method: 'POST', body: { comment: 'see', attachments: [{ id: 'x1', kind: 'image', ...record }] } })
    expect(created.status).toBe(201)
    expect((created.json as Annotation).attachments?.[0]?.sha256).toBe(up.json.sha256)
    const reply = await request(api(`/api/annotations/${created.json.id}/replies`), { method: 'POST', body: { message: 'and this', attachments: [{ id: 'x2', kind: 'image', ...record }] } })
    expect(reply.status).toBe(201)
  })

  it('multipart upload works', async () => {
    const { api } = await setup()
    const boundary = 'xyzBOUNDARY'
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
      RED,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ])
    const up = await request(api('/api/attachments'), { method: 'POST', headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` }, body })
    expect(up.status).toBe(201)
    expect(up.json.bytes).toBe(RED.length)
  })

  it('not an image → 415 whatever the header says; too big → 413; a reference to nothing → 400', async () => {
    const { api } = await setup()
    const fake = await request(api('/api/attachments'), { method: 'POST', headers: { 'Content-Type': 'image/png' }, body: '<html><script>alert(1)</script></html>' })
    expect(fake.status).toBe(415)
    expect(fake.json.error.code).toBe('UNSUPPORTED_MEDIA_TYPE')
    const huge = Buffer.concat([RED, Buffer.alloc(5 * 1024 * 1024)])
    const big = await request(api('/api/attachments'), { method: 'POST', headers: { 'Content-Type': 'image/png' }, body: huge })
    expect(big.status).toBe(413)
    expect(big.json.error.message).toMatch(/attachment/)
    const session = (await request(api('/api/sessions'), { method: 'POST', body: { url: 'http://localhost/' } })).json as Session
    const dangling = await request(api(`/api/sessions/${session.id}/annotations`), {
      method: 'POST',
      body: { comment: 'x', attachments: [{ id: 'x', kind: 'image', mime: 'image/png', bytes: 5, width: 1, height: 1, sha256: 'b'.repeat(64) }] },
    })
    expect(dangling.status).toBe(400)
    expect(dangling.json.error.message).toContain('attachments.0.sha256')
  })

  it('path traversal and anything that is not a sha256 → 404', async () => {
    const { api } = await setup()
    for (const p of ['..%2F..%2Fetc%2Fpasswd', '..%2Fstore.json', '%2e%2e%2fstore.json', 'abc', `${'a'.repeat(64)}.png`, 'A'.repeat(64), 'a'.repeat(64)]) {
      const r = await request(api(`/api/attachments/${p}`))
      expect(r.status, p).toBe(404)
    }
    // A dot-segment path is normalised by the URL parser before routing: it never reaches a file.
    for (const p of ['/api/attachments/../../store.json', '/api/attachments/%2e%2e/%2e%2e/.marginalia/store.json']) {
      const r = await request(api(p))
      expect(r.status, p).toBe(404)
    }
  })
})

describe('the file blob store', () => {
  it('lists blobs by sha256 and deletes them', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const blobs = new FileBlobStore(path.join(t.dir, 'attachments'))
    const stored = await storeImage(blobs, RED)
    expect((await blobs.list()).map((b) => b.sha256)).toEqual([stored.sha256])
    await blobs.delete(stored.sha256)
    expect(await blobs.has(stored.sha256)).toBe(false)
  })
})

describe('marginalia archive keeps the images of archived annotations', () => {
  it('archivedAttachments reads the sha256s archived lines reference', async () => {
    const { archivedAttachments } = await import('../../../src/cli/archive.js')
    const t = tempDir()
    cleanups.push(t.cleanup)
    const { mkdirSync, writeFileSync } = await import('node:fs')
    const dir = path.join(t.dir, 'archive')
    mkdirSync(dir)
    const sha = 'c'.repeat(64)
    writeFileSync(path.join(dir, '2026-01-01.jsonl'), `${JSON.stringify({ id: 'a', attachments: [{ sha256: sha }] })}\n`)
    expect([...archivedAttachments(dir)]).toEqual([sha])
    expect(archivedAttachments(path.join(t.dir, 'none')).size).toBe(0)
  })
})
