/**
 * The browser extension in Chromium: the unpacked build (dist/extension/chromium) loaded into a
 * persistent headless profile, its service worker to set the documented storage keys, and a tiny
 * site server with headers of its own (a strict Content-Security-Policy).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { chromium, type BrowserContext, type Worker } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../../helpers/chromium.js'
import type { Cleanups } from '../../helpers/cleanup.js'
import { listenOnLoopback } from '../../helpers/page.js'

const BUILT = path.resolve(import.meta.dirname, '../../../dist/extension/chromium')
/** The ID the manifest's key gives the unpacked Chromium build. */
export const EXTENSION_ID = 'fkdilionbgjppppfmpgbfakpiamkedhg'
export const EXTENSION_ORIGIN = `chrome-extension://${EXTENSION_ID}`

export interface Loaded {
  context: BrowserContext
  worker: Worker
}

/**
 * Launch Chromium with the extension. `permitted`: host patterns the profile starts with granted —
 * headless Chromium cannot show the browser's "Allow this site?" question that
 * `chrome.permissions.request` asks (the request never settles), so the test's copy of the build
 * lists them as granted at install, the state a person's "Allow" leaves behind. `args`: more
 * Chromium switches (a host resolver rule that serves a named site from the loopback).
 */
export async function launchWithExtension(cleanups: Cleanups, permitted: readonly string[], args: readonly string[] = []): Promise<Loaded> {
  const dir = mkdtempSync(path.join(tmpdir(), 'marginalia-ext-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const unpacked = path.join(dir, 'extension')
  cpSync(BUILT, unpacked, { recursive: true })
  const manifestPath = path.join(unpacked, 'manifest.json')
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>
  writeFileSync(manifestPath, JSON.stringify({ ...manifest, host_permissions: permitted }))
  const context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath: chromiumPath()!,
    headless: true,
    viewport: { width: 1100, height: 750 },
    args: [...CHROMIUM_ARGS, `--disable-extensions-except=${unpacked}`, `--load-extension=${unpacked}`, ...args],
    timeout: 30_000,
  })
  cleanups.push(() => context.close())
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker', { timeout: 15_000 }))
  return { context, worker }
}

/** Set the documented settings (`server`, `sites`) in chrome.storage.sync, as a person's options page or an admin's preset would. */
export async function configure(worker: Worker, settings: { server?: string; sites?: string[] }): Promise<void> {
  await worker.evaluate(`chrome.storage.sync.set(${JSON.stringify(settings)})`)
}

/** The origins the page scripts are registered for, as the service worker has them now. */
export async function registeredMatches(worker: Worker): Promise<string[]> {
  return (await worker.evaluate('chrome.scripting.getRegisteredContentScripts().then((s) => s.flatMap((x) => x.id === "marginalia-page" ? x.matches : []))')) as string[]
}

export interface Site {
  origin: string
  /** Every request the site got, in order (pathname and headers). */
  requests: { path: string; headers: IncomingHttpHeaders }[]
}

/** A site: pathname → [headers, body]; anything else 404. */
export async function serveSite(cleanups: Cleanups, routes: Record<string, [OutgoingHttpHeaders, string]>): Promise<Site> {
  const requests: Site['requests'] = []
  const server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname
    requests.push({ path: pathname, headers: req.headers })
    const route = routes[pathname]
    if (!route) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found')
    res.writeHead(200, { 'Cache-Control': 'no-store', ...route[0] }).end(route[1])
  })
  return { origin: await listenOnLoopback(server, cleanups), requests }
}
