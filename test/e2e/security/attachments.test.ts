/**
 * An attachment is served only when it is what its name claims: a regular file (not a link), whose
 * bytes hash (SHA-256) to its name and sniff as an allowed image. Otherwise every door — the
 * agent's `get_annotation` images, MCP `resources/read`, `GET /api/attachments/<sha>` — treats it
 * as missing: its bytes are never handed out.
 */
import { createHash } from 'node:crypto'
import { lstatSync, mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { openStore, type Store } from '../../../src/index.js'
import { storeImage } from '../../../src/store/blobs/index.js'
import { connect } from '../../helpers/mcp.js'
import { request, serve } from '../../helpers/http.js'
import { tempDir } from '../../helpers/store.js'
import { solidPng } from '../../helpers/png.js'
import { PG_URL, describePg, dropSchema, freshSchema, sql } from '../../helpers/pg.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const SECRET = 'OPENAI_API_KEY=sk-live-0123456789abcdef\n'
const sha256 = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex')

/** A file store with one annotation whose screenshot is `<sha>.png`; returns where that file is. */
async function withAttachment(): Promise<{ store: Store; dir: string; blob: string; sha: string; id: string; png: Buffer; outside: string }> {
  const t = tempDir('marginalia-blob-')
  cleanups.push(t.cleanup)
  const outside = path.join(t.dir, 'outside')
  mkdirSync(outside)
  const store = await openStore({ file: t.file, pollIntervalMs: 0, watchFiles: false, onError: () => {} })
  cleanups.push(() => store.close())
  const png = solidPng(6, 4, [200, 10, 10])
  const stored = await storeImage(store.blobs, png)
  const session = await store.createSession({ url: 'http://localhost:5173/' })
  const a = await store.addAnnotation({ sessionId: session.id, comment: 'look', attachments: [{ id: 'att_1', kind: 'screenshot', ...stored }] })
  const dir = path.join(t.dir, '.marginalia', 'attachments')
  return { store, dir, blob: path.join(dir, `${stored.sha256}.png`), sha: stored.sha256, id: a.id, png, outside }
}

/** What each door hands out for `sha` (annotation `id`): the bytes it would serve, or undefined. */
async function served(store: Store, id: string, sha: string): Promise<{ tool: Buffer[]; resource: Buffer | undefined; http: { status: number; body: Buffer } }> {
  const { client } = await connect(store)
  cleanups.push(() => client.close())
  const result = (await client.callTool({ name: 'get_annotation', arguments: { id } })) as CallToolResult
  expect(result.isError).toBeFalsy() // the annotation itself is still readable
  const tool = result.content.filter((c) => c.type === 'image').map((c) => Buffer.from(c.data, 'base64'))
  const resource = await client.readResource({ uri: `marginalia://attachments/${sha}` }).then(
    (r) => Buffer.from((r.contents[0] as { blob: string }).blob, 'base64'),
    () => undefined,
  )
  const server = await serve(store, cleanups)
  const res = await fetch(`${server.url}/api/attachments/${sha}`)
  const http = { status: res.status, body: Buffer.from(await res.arrayBuffer()) }
  return { tool, resource, http }
}

function expectNotServed(doors: Awaited<ReturnType<typeof served>>, secret: Buffer): void {
  for (const b of doors.tool) expect(b.includes(secret)).toBe(false)
  expect(doors.tool).toEqual([])
  expect(doors.resource).toBeUndefined()
  expect(doors.http.status).toBe(404)
  expect(doors.http.body.includes(secret)).toBe(false)
}

describe('the file blob store serves only what an attachment claims to be', () => {
  it('a regular attachment is served by every door (the baseline)', async () => {
    const { store, id, sha, png } = await withAttachment()
    const doors = await served(store, id, sha)
    expect(doors.tool.map((b) => b.equals(png))).toEqual([true])
    expect(doors.resource?.equals(png)).toBe(true)
    expect(doors.http.status).toBe(200)
    expect(doors.http.body.equals(png)).toBe(true)
  })

  it('attachments/<sha>.png -> ../../secret.txt: not served by get_annotation, resources/read nor GET /api/attachments', async () => {
    const { store, blob, sha, id, outside } = await withAttachment()
    const secret = path.join(outside, 'secret.txt')
    writeFileSync(secret, SECRET)
    unlinkSync(blob)
    symlinkSync(path.relative(path.dirname(blob), secret), blob)
    const refused: unknown[] = []
    ;(store.blobs as { onRefused?: (e: unknown) => void }).onRefused = (e) => refused.push(e)
    expectNotServed(await served(store, id, sha), Buffer.from(SECRET))
    expect(String(refused[0])).toContain(`${blob}: is a symbolic link to `)
  })

  it('a link to a real image whose bytes hash to the name is refused all the same (a link is never followed)', async () => {
    const { store, blob, sha, id, outside, png } = await withAttachment()
    const elsewhere = path.join(outside, 'private-screenshot.png')
    writeFileSync(elsewhere, png)
    unlinkSync(blob)
    symlinkSync(elsewhere, blob)
    expectNotServed(await served(store, id, sha), png)
  })

  it('a regular file whose bytes do not hash to its name is refused', async () => {
    const { store, blob, sha, id } = await withAttachment()
    const other = solidPng(6, 4, [0, 0, 0]) // a valid image, but not the one named
    writeFileSync(blob, other)
    const refused: unknown[] = []
    ;(store.blobs as { onRefused?: (e: unknown) => void }).onRefused = (e) => refused.push(e)
    expectNotServed(await served(store, id, sha), other)
    expect(String(refused[0])).toMatch(/do not hash to its name/)
  })

  it('a regular file that hashes to its name but is not an image is refused', async () => {
    const { store, dir } = await withAttachment()
    const sha = sha256(SECRET)
    writeFileSync(path.join(dir, `${sha}.png`), SECRET)
    const session = await store.createSession({ url: 'http://localhost:5173/other' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'x', attachments: [{ id: 'att_9', kind: 'image', sha256: sha, mime: 'image/png', bytes: SECRET.length, width: 1, height: 1 }] })
    expectNotServed(await served(store, a.id, sha), Buffer.from(SECRET))
  })
})

const suite = await describePg('attachments in PostgreSQL that are not what they claim')

suite('attachments in PostgreSQL that are not what they claim', () => {
  it('a row whose bytes do not hash to its sha256, or are not an image, is not served', async () => {
    const schema = freshSchema()
    cleanups.push(() => dropSchema(schema))
    const store = await openStore({ url: PG_URL, schema, pollIntervalMs: 0, onError: () => {} })
    cleanups.push(() => store.close())
    const png = solidPng(5, 5, [9, 9, 9])
    const stored = await storeImage(store.blobs, png)
    expect(Buffer.from((await store.blobs.get(stored.sha256))!.bytes).equals(png)).toBe(true)
    const notAnImage = Buffer.from(SECRET)
    await sql(`INSERT INTO "${schema}".blobs (sha256, mime, bytes) VALUES ($1, 'image/png', $2)`, [sha256(notAnImage), notAnImage])
    await sql(`UPDATE "${schema}".blobs SET bytes = $2 WHERE sha256 = $1`, [stored.sha256, solidPng(5, 5, [0, 0, 0])])
    expect(await store.blobs.get(sha256(notAnImage))).toBeUndefined()
    expect(await store.blobs.get(stored.sha256)).toBeUndefined()
    const server = await serve(store, cleanups)
    for (const sha of [sha256(notAnImage), stored.sha256]) {
      const res = await request(`${server.url}/api/attachments/${sha}`)
      expect(res.status).toBe(404)
    }
  })
})

describe('uploading again', () => {
  it('an upload of the real image replaces a regular file with other bytes under its name; a link there is refused and left', async () => {
    const { store, blob, sha, png, outside } = await withAttachment()
    writeFileSync(blob, 'damaged')
    await storeImage(store.blobs, png)
    expect(Buffer.from((await store.blobs.get(sha))!.bytes).equals(png)).toBe(true)
    const elsewhere = path.join(outside, 'other.png')
    writeFileSync(elsewhere, 'not mine')
    unlinkSync(blob)
    symlinkSync(elsewhere, blob)
    await expect(storeImage(store.blobs, png)).rejects.toThrow(`${blob}: is a symbolic link to ${elsewhere}`)
    expect(readFileSync(elsewhere, 'utf8')).toBe('not mine')
    expect(lstatSync(blob).isSymbolicLink()).toBe(true)
  })
})
