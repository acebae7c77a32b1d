/**
 * The page-response injector the Vite plugin puts before SvelteKit's and Astro's page middleware:
 * the tags go right after <head> of an HTML page however its handler writes it (writeHead with a
 * content-length, chunks that split the <head> tag, one end()), and nothing else is touched.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { injectIntoHtml } from '../../src/integrations/shared/inject-html.js'
import { useCleanups } from '../helpers/cleanup.js'

const TAGS = '<script src="/__marginalia-loader.js" data-marginalia-loader></script>'
const cleanups = useCleanups()

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, tags: () => string | undefined = () => TAGS): Promise<string> {
  const inject = injectIntoHtml(tags, 'data-marginalia-loader')
  const server = createServer((req, res) => inject(req, res, () => handler(req, res)))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const page = (url: string, accept = 'text/html,application/xhtml+xml') => fetch(url, { headers: { accept } })

describe('injectIntoHtml', () => {
  it('puts the tags right after <head> of a page written with writeHead and a content-length', async () => {
    const html = '<!doctype html><html><head><meta charset="utf-8"></head><body>é</body></html>'
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(html) })
      res.end(html)
    })
    const r = await page(url)
    expect(await r.text()).toBe(`<!doctype html><html><head>${TAGS}<meta charset="utf-8"></head><body>é</body></html>`)
  })

  it('finds the head across streamed chunks and injects once', async () => {
    const url = await serve((_req, res) => {
      res.setHeader('Content-Type', 'text/html')
      // "é" split between two chunks before the head is found: its bytes stay whole.
      const e = Buffer.from('é')
      res.write(Buffer.concat([Buffer.from('<!doctype html><!-- caf'), e.subarray(0, 1)]))
      res.write(Buffer.concat([e.subarray(1), Buffer.from(' --><html lang="en"><he')]))
      res.write(Buffer.from('ad data-x="1"><title>T</title></head><body>'))
      res.write('<p>streamed</p>')
      res.end('</body></html>')
    })
    expect(await (await page(url)).text()).toBe(`<!doctype html><!-- café --><html lang="en"><head data-x="1">${TAGS}<title>T</title></head><body><p>streamed</p></body></html>`)
  })

  it('leaves alone what is not an HTML page: JSON, a request that does not accept HTML, a page that has the tags, no tags to give', async () => {
    const json = await serve((_req, res) => {
      res.setHeader('Content-Type', 'application/json')
      res.end('{"head":"<head>"}')
    })
    expect(await (await page(json)).text()).toBe('{"head":"<head>"}')
    const html = '<html><head></head></html>'
    const plain = await serve((_req, res) => {
      res.setHeader('Content-Type', 'text/html')
      res.end(html)
    })
    expect(await (await page(plain, '*/*')).text()).toBe(html)
    const already = `<html><head>${TAGS}</head></html>`
    const twice = await serve((_req, res) => {
      res.setHeader('Content-Type', 'text/html')
      res.end(already)
    })
    expect(await (await page(twice)).text()).toBe(already)
    const off = await serve((_req, res) => {
      res.setHeader('Content-Type', 'text/html')
      res.end(html)
    }, () => undefined)
    expect(await (await page(off)).text()).toBe(html)
  })
})
