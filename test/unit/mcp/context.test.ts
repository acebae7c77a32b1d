import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { storeImage } from '../../../src/store/blobs/index.js'
import { memoryStore } from '../../helpers/store.js'
import { connect, structured } from '../../helpers/mcp.js'
import { solidPng } from '../../helpers/png.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

async function setup() {
  const store = memoryStore()
  cleanups.push(() => store.close())
  const png = solidPng(10, 4, [0, 128, 255])
  const stored = await storeImage(store.blobs, png)
  const pasted = solidPng(3, 3, [255, 255, 0])
  const storedPasted = await storeImage(store.blobs, pasted)
  const session = await store.createSession({ url: 'http://localhost/' })
  const a = await store.addAnnotation({
    sessionId: session.id,
    comment: 'the header is the wrong blue',
    attachments: [{ id: 'att_1', kind: 'screenshot', ...stored }],
    context: { entries: [{ kind: 'console.error', at: '2026-01-01T12:00:00.000Z', message: 'TypeError: x is undefined' }] },
  })
  await store.reply(a.id, { author: 'human', message: 'like this one', attachments: [{ id: 'att_2', kind: 'image', ...storedPasted }] })
  const { client } = await connect(store)
  cleanups.push(() => client.close())
  return { store, client, a, png, pasted, stored }
}

describe('images for the agent over MCP', () => {
  it('get_annotation returns image content that decodes to the stored bytes, after the text', async () => {
    const { client, a, png, pasted } = await setup()
    const result = (await client.callTool({ name: 'get_annotation', arguments: { id: a.id } })) as CallToolResult
    expect(result.isError).toBeFalsy()
    expect(result.content[0]!.type).toBe('text')
    const images = result.content.filter((c) => c.type === 'image')
    expect(images.map((i) => i.mimeType)).toEqual(['image/png', 'image/png'])
    expect(Buffer.from(images[0]!.data, 'base64').equals(png)).toBe(true)
    expect(Buffer.from(images[1]!.data, 'base64').equals(pasted)).toBe(true)
    const record = structured<{ annotation: { attachments: { kind: string }[]; context: { entries: { message: string }[] } } }>(result).annotation
    expect(record.attachments[0]!.kind).toBe('screenshot')
    expect(record.context.entries[0]!.message).toContain('TypeError')
  })

  it('images: false leaves them out; summaries count them', async () => {
    const { client, a } = await setup()
    const result = (await client.callTool({ name: 'get_annotation', arguments: { id: a.id, images: false } })) as CallToolResult
    expect(result.content.map((c) => c.type)).toEqual(['text'])
    const list = (await client.callTool({ name: 'get_all_pending', arguments: {} })) as CallToolResult
    expect(structured<{ annotations: { images?: number }[] }>(list).annotations[0]!.images).toBe(2)
  })

  it('each attachment is a resource marginalia://attachments/<sha256>', async () => {
    const { client, stored, png } = await setup()
    const read = await client.readResource({ uri: `marginalia://attachments/${stored.sha256}` })
    const content = read.contents[0] as { mimeType: string; blob: string }
    expect(content.mimeType).toBe('image/png')
    expect(Buffer.from(content.blob, 'base64').equals(png)).toBe(true)
    await expect(client.readResource({ uri: 'marginalia://attachments/..%2Fstore.json' })).rejects.toThrow(/No attachment/)
  })
})
