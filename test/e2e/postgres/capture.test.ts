/**
 * capture across servers on PostgreSQL: the agent asks through server B, the person's browser is
 * connected to server A. The request reaches A's overlay through the database (LISTEN/NOTIFY),
 * the picture goes to A (its blob in the database), and B's waiting call hears the answer.
 */
import { describe, expect, it } from 'vitest'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { openStore } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { servePages, startMarginalia } from '../../helpers/page.js'
import { eventually } from '../../helpers/eventually.js'
import { connect, structured } from '../../helpers/mcp.js'
import { decodePng } from '../../helpers/png.js'
import { PG_URL, describePg, dropSchema, freshSchema } from '../../helpers/pg.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium
const suite = enabled ? await describePg('capture across two servers on PostgreSQL') : describe.skip

const page = (server: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Buy</title>
<style>body { margin: 0; padding: 40px; background: #fff; } #buy { width: 200px; height: 100px; border: 0; background: rgb(220, 0, 0); }</style></head>
<body><button id="buy" type="button" aria-label="Buy"></button>
<script src="${server}/overlay.js"></script></body></html>`

function colourOf(result: CallToolResult): [number, number, number] {
  const image = result.content.find((c) => c.type === 'image')
  if (!image || image.type !== 'image') throw new Error(`no image: ${JSON.stringify(result.content).slice(0, 300)}`)
  const img = decodePng(Buffer.from(image.data, 'base64'))
  const [r, g, b] = img.pixel(Math.floor(img.width / 2), Math.floor(img.height / 2) + Math.floor(img.height / 6))
  return [r, g, b]
}

suite('capture on PostgreSQL', () => {
  it('requested through one server, answered by the browser connected to the other', { timeout: 90_000 }, async () => {
    const schema = freshSchema()
    cleanups.push(() => dropSchema(schema))
    const storeA = await openStore({ url: PG_URL, schema })
    const storeB = await openStore({ url: PG_URL, schema })
    const { http: a } = await startMarginalia(cleanups, {}, storeA)
    const { http: b } = await startMarginalia(cleanups, {}, storeB)
    const pages = await servePages({ '/buy': () => page(a.url) }, cleanups)

    // The annotation is written through B; the page (connected to A) loads it.
    const session = await storeB.createSession({ url: `${pages.origin}/buy` })
    const annotation = await storeB.addAnnotation({ sessionId: session.id, comment: 'Should be green', url: session.url, element: { selector: '#buy' } })
    const { page: tab } = await chromium.newPage({ viewport: { width: 1000, height: 700 } })
    await tab.goto(`${pages.origin}/buy`)
    await eventually(() => tab.locator('marginalia-overlay .pin').count(), 15_000).toBe(1)

    const mcp = await connect(storeB)
    cleanups.push(() => mcp.close())
    expect(b.url).not.toBe(a.url)
    const result = await mcp.call('capture', { id: annotation.id })
    expect(result.isError, JSON.stringify(result.content).slice(0, 300)).toBeFalsy()
    expect(colourOf(result)).toEqual([220, 0, 0])
    expect(structured<{ anchor: string; url: string }>(result)).toMatchObject({ anchor: 'found', url: `${pages.origin}/buy` })
  })
})
