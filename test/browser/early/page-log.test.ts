/**
 * The page log's wrappers (src/browser/early/page-log.ts) in real Chromium, as the early script
 * runs them (bundled from src/browser/early/main.ts, first in <head>): a failed fetch or XHR is
 * logged with its method, status and redacted URL, a successful one and one to an ignored URL
 * are not; console.error and console.warn keep their words (an Error's stack too) and console.log
 * is left as the browser made it; the page gets the originals' answers; the log reads the newest 20;
 * and the calls do O(1) work: a console call's words, JSON and stack are made when the log is read,
 * a fetch's request is read only when it failed.
 */
import { createServer, type Server } from 'node:http'
import { beforeAll, describe, expect, it } from 'vitest'
import type { PageEntry } from '../../../src/store/model.js'
import { useChromium } from '../../helpers/chromium.js'
import { buildEarlyScript, listenOnLoopback } from '../../helpers/page.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

let early = ''
beforeAll(async () => {
  early = await buildEarlyScript()
})

/** The page, `/ok` (200) and anything else 404. */
async function serve(): Promise<string> {
  const server: Server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname
    if (pathname === '/') return void res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><head><script>${early}</script></head><body><h1>Log</h1></body></html>`)
    if (pathname === '/ok') return void res.writeHead(200, { 'Content-Type': 'text/plain' }).end('fine')
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('missing')
  })
  return listenOnLoopback(server, cleanups)
}

describe.skipIf(!enabled)('the page log from the early script', () => {
  it('logs failed fetch and XHR calls (method, status, redacted URL) and nothing else; the page gets the same answers', { timeout: 60_000 }, async () => {
    const origin = await serve()
    const { page } = await chromium.newPage()
    await page.goto(`${origin}/`)
    const seen = await page.evaluate(async () => {
      const log = (window as unknown as Record<symbol, { recent(): PageEntry[]; ignore(t: (u: string) => boolean): void }>)[Symbol.for('marginalia.pageLog')]!
      log.ignore((u) => u.includes('/ignored/'))
      const xhr = (method: string, url: string) =>
        new Promise<number>((resolve) => {
          const r = new XMLHttpRequest()
          r.open(method, url)
          r.addEventListener('loadend', () => resolve(r.status))
          r.send()
        })
      const ok = await fetch('/ok')
      const answers = {
        fetchOk: [ok.status, await ok.text()],
        fetchMissing: (await fetch(new Request('/missing?token=abc&page=2', { method: 'POST' }))).status,
        fetchIgnored: (await fetch('/ignored/one')).status,
        fetchDown: await fetch('http://127.0.0.1:9/nothing').then(
          () => 'answered',
          (e: unknown) => (e instanceof TypeError ? 'TypeError' : 'other'),
        ),
        xhrOk: await xhr('GET', '/ok'),
        xhrMissing: await xhr('get', '/gone?session=s3cr3t'),
        xhrIgnored: await xhr('GET', '/ignored/two'),
      }
      return { answers, entries: log.recent().map(({ at: _at, durationMs: _d, ...e }) => e) }
    })
    expect(seen.answers).toEqual({ fetchOk: [200, 'fine'], fetchMissing: 404, fetchIgnored: 404, fetchDown: 'TypeError', xhrOk: 200, xhrMissing: 404, xhrIgnored: 404 })
    const network = seen.entries.filter((e) => e.kind === 'network')
    expect(network).toEqual([
      { kind: 'network', method: 'POST', url: `${origin}/missing?token=REDACTED&page=2`, status: 404, message: `POST ${origin}/missing?token=REDACTED&page=2 → 404` },
      { kind: 'network', method: 'GET', url: 'http://127.0.0.1:9/nothing', status: 0, message: expect.stringMatching(/^GET http:\/\/127\.0\.0\.1:9\/nothing failed: TypeError/) as unknown as string },
      { kind: 'network', method: 'GET', url: `${origin}/gone?session=REDACTED`, status: 404, message: `GET ${origin}/gone?session=REDACTED → 404` },
    ])
    expect(JSON.stringify(seen.entries)).not.toContain('s3cr3t')
  })

  it('keeps console.error and console.warn words (with an Error\'s stack), leaves console.log alone, and reads the newest 20 oldest first', { timeout: 60_000 }, async () => {
    const origin = await serve()
    const { page } = await chromium.newPage()
    await page.goto(`${origin}/`)
    const seen = await page.evaluate(() => {
      const log = (window as unknown as Record<symbol, { recent(): PageEntry[] }>)[Symbol.for('marginalia.pageLog')]!
      console.warn('total is', { cents: 1200 }, new Error('coupon ignored'))
      const first = log.recent()
      console.log('not kept')
      for (let i = 0; i < 30; i++) console.error('line', i)
      const all = log.recent()
      return { first, native: Function.prototype.toString.call(console.log).includes('[native code]'), messages: all.map((e) => e.message), ordered: all.every((e, i) => i === 0 || all[i - 1]!.at <= e.at), iso: all.every((e) => !Number.isNaN(Date.parse(e.at))) }
    })
    expect(seen.first).toHaveLength(1)
    expect(seen.first[0]).toMatchObject({ kind: 'console.warn', message: 'total is {"cents":1200} Error: coupon ignored' })
    expect(seen.first[0]!.stack).toContain('coupon ignored')
    expect(seen.native).toBe(true)
    expect(seen.messages).toEqual(Array.from({ length: 20 }, (_, i) => `line ${i + 10}`))
    expect(seen.ordered && seen.iso).toBe(true)
  })

  it('does O(1) work on the call: a console call words, serialises and reads no stack until the log is read; a fetch reads nothing of its request unless it fails', { timeout: 60_000 }, async () => {
    const origin = await serve()
    const { page } = await chromium.newPage()
    await page.goto(`${origin}/`)
    const seen = await page.evaluate(async () => {
      const log = (window as unknown as Record<symbol, { recent(): PageEntry[] }>)[Symbol.for('marginalia.pageLog')]!
      const count = { stack: 0, json: 0, url: 0, request: 0 }
      const error = new Error('coupon ignored')
      const stack = error.stack
      Object.defineProperty(error, 'stack', { get: () => (count.stack++, stack) })
      const value = { toJSON: () => (count.json++, { cents: 1200 }) }
      const RealURL = URL
      window.URL = new Proxy(RealURL, { construct: (target, args: [string, string?]) => (count.url++, new target(...args)) })
      for (const key of ['url', 'method', 'headers'] as const) {
        const getter = Object.getOwnPropertyDescriptor(Request.prototype, key)!.get!
        Object.defineProperty(Request.prototype, key, { configurable: true, get(this: Request) { count.request++; return getter.call(this) as unknown } })
      }
      const clone = Request.prototype.clone
      Request.prototype.clone = function (this: Request) { count.request++; return clone.call(this) }
      console.warn('total is', value, error)
      const onCall = { ...count }
      const entry = log.recent()[0]
      const onRead = { ...count }
      await (await fetch(new Request('/ok', { method: 'POST' }))).text()
      await (await fetch('/ok?page=2')).text()
      const afterOk = { url: count.url, request: count.request }
      await fetch(new Request('/missing'))
      await new Promise((resolve) => setTimeout(resolve, 50))
      window.URL = RealURL
      return { onCall, onRead, entry, afterOk, afterFailure: { url: count.url, request: count.request }, failures: log.recent().filter((e) => e.kind === 'network').map((e) => e.message) }
    })
    // The call kept a record of its arguments: nothing was formatted or read.
    expect(seen.onCall).toEqual({ stack: 0, json: 0, url: 0, request: 0 })
    // Read: worded once, as before.
    expect(seen.entry).toMatchObject({ kind: 'console.warn', message: 'total is {"cents":1200} Error: coupon ignored' })
    expect(seen.entry!.stack).toContain('coupon ignored')
    expect(seen.onRead).toMatchObject({ stack: 1, json: 1 })
    // Successful fetches: no URL parsed, no request read or cloned.
    expect(seen.afterOk).toEqual({ url: 0, request: 0 })
    // A failure is resolved, redacted and logged (its request read then).
    expect(seen.afterFailure.request).toBeGreaterThan(0)
    expect(seen.failures).toEqual([`GET ${origin}/missing → 404`])
  })
})
