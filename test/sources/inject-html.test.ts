/** The plugin's HTML injection for server-rendered pages: after <head>, streamed or whole; everything else untouched. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { injectIntoHtml } from '../../src/integrations/shared/inject-html.js'
import { useCleanups } from '../helpers/cleanup.js'

const cleanups = useCleanups()
const TAGS = '<script src="/__marginalia-loader.js" data-marginalia-loader></script>'

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, tags: () => string | undefined = () => TAGS): Promise<string> {
  const inject = injectIntoHtml(tags, 'data-marginalia-loader')
  const server = createServer((req, res) => inject(req, res, () => handler(req, res)))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}
const html = { Accept: 'text/html' }

describe('injectIntoHtml', () => {
  it('puts the tags right after <head> of a streamed page whose <head> spans chunks', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
      res.write('<!DOCTYPE html><html lang="en"><he')
      res.write('ad class="x"><meta charset="utf-8"/>')
      setImmediate(() => res.end('</head><body>é</body></html>'))
    })
    expect(await (await fetch(url, { headers: html })).text()).toBe(`<!DOCTYPE html><html lang="en"><head class="x">${TAGS}<meta charset="utf-8"/></head><body>é</body></html>`)
  })

  it('fixes a Content-Length given up front; leaves non-HTML, pages that have the tags, and non-GET alone', async () => {
    const page = '<html><head></head><body>hi</body></html>'
    const url = await serve((req, res) => {
      if (req.url === '/json') return void res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '2' }).end('{}')
      if (req.url === '/has') return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<head>${TAGS}</head>`)
      res.setHeader('Content-Type', 'text/html')
      res.setHeader('Content-Length', Buffer.byteLength(page))
      res.end(page)
    })
    const r = await fetch(url, { headers: html })
    const body = await r.text()
    expect(body).toBe(`<html><head>${TAGS}</head><body>hi</body></html>`)
    expect(r.headers.get('content-length')).toBe(String(Buffer.byteLength(body)))
    expect(await (await fetch(`${url}json`, { headers: html })).text()).toBe('{}')
    expect(await (await fetch(`${url}has`, { headers: html })).text()).toBe(`<head>${TAGS}</head>`)
    expect(await (await fetch(url, { method: 'POST', headers: html })).text()).toBe(page)
  })

  it('adds nothing while the plugin has no server (tags() undefined)', async () => {
    const url = await serve((_req, res) => void res.writeHead(200, { 'Content-Type': 'text/html' }).end('<head></head>'), () => undefined)
    expect(await (await fetch(url, { headers: html })).text()).toBe('<head></head>')
  })
})
