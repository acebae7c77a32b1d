/**
 * The extension's service worker (Firefox: its background script). It
 * - registers the page scripts for the listed sites whose permission the person granted, and
 *   for no other page (`chrome.scripting.registerContentScripts`, again whenever the settings or
 *   the permissions change);
 * - carries every request the overlay makes to the configured server (a port per request, the
 *   body streamed back), adding the person's session itself: a page's Content-Security-Policy
 *   cannot block it and the token never enters the page;
 * - draws screenshots from the browser's own view of the tab when it may;
 * - keeps the session the options page signs in with, and ends it on sign-out or a 401.
 */
import { matchPattern, readSession, readSettings, type Settings, type StoredSession } from './settings.js'
import type { FetchRequest, PageMessage } from './messages.js'

declare const __MARGINALIA_BROWSER__: 'chromium' | 'firefox'
const PORTLESS = typeof __MARGINALIA_BROWSER__ === 'string' && __MARGINALIA_BROWSER__ === 'firefox'

const SCRIPT_IDS = ['marginalia-page', 'marginalia-relay']
/** What the overlay may ask of the server, and nothing else: its REST API, the health check, who is signed in, signing out. */
const ALLOWED_PATHS = [/^\/health$/, /^\/api\//, /^\/auth\/(me|sign-out)$/]
const ALLOWED_METHODS = new Set(['GET', 'POST', 'DELETE'])

let syncing: Promise<void> = Promise.resolve()

/** Register the page scripts for exactly the listed, permitted sites (one at a time: changes can come together). */
function syncScripts(): Promise<void> {
  syncing = syncing.then(registerNow, registerNow)
  return syncing
}

async function registerNow(): Promise<void> {
  const { sites } = await readSettings()
  const on: string[] = []
  for (const site of sites) if (await chrome.permissions.contains({ origins: [matchPattern(site, PORTLESS)] })) on.push(site)
  const matches = [...new Set(on.map((s) => matchPattern(s, PORTLESS)))]
  const registered = await chrome.scripting.getRegisteredContentScripts({ ids: SCRIPT_IDS })
  if (registered.length > 0) await chrome.scripting.unregisterContentScripts({ ids: registered.map((r) => r.id) })
  if (matches.length === 0) return
  await chrome.scripting.registerContentScripts([
    // The page's own world, before its first script: the page log (and later the overlay) need its console, fetch and DOM properties.
    { id: 'marginalia-page', js: ['page.js'], matches, runAt: 'document_start', world: 'MAIN', allFrames: false, persistAcrossSessions: true },
    // The extension's side of the page: hands the overlay a private channel to this worker.
    { id: 'marginalia-relay', js: ['relay.js'], matches, runAt: 'document_start', world: 'ISOLATED', allFrames: false, persistAcrossSessions: true },
  ])
}

chrome.runtime.onInstalled.addListener(() => void syncScripts().catch(report))
chrome.runtime.onStartup.addListener(() => void syncScripts().catch(report))
chrome.permissions.onAdded.addListener(() => void syncScripts().catch(report))
chrome.permissions.onRemoved.addListener(() => void syncScripts().catch(report))
chrome.storage.onChanged.addListener((changes, area) => {
  if ((area === 'sync' || area === 'managed') && ('sites' in changes || 'server' in changes)) void syncScripts().catch(report)
})

function report(e: unknown): void {
  console.error('Marginalia:', e)
}

/** The listed site a content script runs on (top frame only), or undefined for anything else. */
function listedSite(sender: chrome.runtime.MessageSender | undefined, settings: Settings): string | undefined {
  if (!sender?.tab || sender.frameId !== 0 || !sender.url) return undefined
  const origin = new URL(sender.url).origin
  return settings.sites.includes(origin) ? origin : undefined
}

/** Whether a message comes from the extension's own pages (popup, options), not from a web page. */
function fromExtensionPage(sender: chrome.runtime.MessageSender): boolean {
  return sender.id === chrome.runtime.id && sender.tab === undefined ? true : sender.url?.startsWith(chrome.runtime.getURL('')) === true
}

// ------------------------------------------------------------------ requests to the server

chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== 'marginalia:fetch') return port.disconnect()
  const controller = new AbortController()
  port.onDisconnect.addListener(() => controller.abort())
  port.onMessage.addListener((message) => void carry(port, message as FetchRequest, controller).catch((e: unknown) => {
    try {
      port.postMessage({ error: e instanceof Error ? e.message : String(e) })
      port.disconnect()
    } catch {
      // the page went away
    }
  }))
})

async function carry(port: chrome.runtime.Port, request: FetchRequest, controller: AbortController): Promise<void> {
  const settings = await readSettings()
  if (!listedSite(port.sender, settings)) throw new Error('Marginalia is not on for this site.')
  const url = new URL(request.url)
  const base = new URL(settings.server)
  const path = url.pathname.slice(base.pathname.replace(/\/$/, '').length)
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname.replace(/\/$/, '')) || !ALLOWED_PATHS.some((p) => p.test(path)) || !ALLOWED_METHODS.has(request.method)) {
    throw new Error(`The extension carries only the overlay's own requests to ${settings.server}.`)
  }
  const session = await readSession(settings.server)
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(request.headers)) if (/^(content-type|accept)$/i.test(k)) headers[k] = v
  if (session) headers.Authorization = `Bearer ${session.token}`
  const body = request.base64 !== undefined ? bytes(request.base64) : request.body
  const response = await fetch(url, { method: request.method, headers, body: body ?? null, signal: controller.signal, credentials: 'omit', cache: 'no-store' })
  if (session && (response.status === 401 || path === '/auth/sign-out')) await forget(session)
  port.postMessage({ status: response.status, statusText: response.statusText, contentType: response.headers.get('content-type') ?? '' })
  if (response.body) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      port.postMessage({ chunk: value })
    }
  }
  port.postMessage({ end: true })
  port.disconnect()
}

function bytes(base64: string): Uint8Array<ArrayBuffer> {
  const raw = atob(base64)
  const out = new Uint8Array(raw.length)
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i)
  return out
}

function base64Of(data: ArrayBuffer): string {
  const view = new Uint8Array(data)
  let s = ''
  for (let i = 0; i < view.length; i += 0x8000) s += String.fromCharCode(...view.subarray(i, i + 0x8000))
  return btoa(s)
}

/** Forget the session (it was signed out, revoked or expired), unless a newer one replaced it meanwhile. */
async function forget(session: StoredSession): Promise<void> {
  const { session: now } = await chrome.storage.local.get('session')
  if ((now as StoredSession | undefined)?.token === session.token) await chrome.storage.local.remove('session')
}

// ------------------------------------------------------------------ one-off messages

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  void answer(message as PageMessage, sender).then(sendResponse, (e: unknown) => sendResponse({ error: e instanceof Error ? e.message : String(e) }))
  return true
})

async function answer(message: PageMessage, sender: chrome.runtime.MessageSender): Promise<unknown> {
  const settings = await readSettings()
  switch (message.type) {
    case 'config': {
      if (!listedSite(sender, settings)) return { on: false }
      const s = await readSession(settings.server)
      return { on: true, server: settings.server, who: s ? { name: s.name, id: s.id, expiresAt: s.expiresAt } : null, ...(settings.maskInputs === undefined ? {} : { maskInputs: settings.maskInputs }) }
    }
    case 'capture':
      if (!listedSite(sender, settings) || sender.tab === undefined) return { error: 'not on' }
      return { png: await capture(sender.tab.windowId, message.rect, message.viewport) }
    case 'openSignIn':
      if (!listedSite(sender, settings)) return { error: 'not on' }
      await chrome.runtime.openOptionsPage()
      return {}
    case 'session':
      if (!fromExtensionPage(sender)) return { error: 'refused' }
      await chrome.storage.local.set({ session: { ...message.session, server: settings.server } })
      return {}
    case 'signOut': {
      if (!fromExtensionPage(sender)) return { error: 'refused' }
      const s = await readSession(settings.server)
      await chrome.storage.local.remove('session')
      if (s) await fetch(`${settings.server}/auth/sign-out`, { method: 'POST', headers: { Authorization: `Bearer ${s.token}` }, credentials: 'omit' }).catch(() => undefined)
      return {}
    }
    case 'status':
      if (!fromExtensionPage(sender)) return { error: 'refused' }
      return status(settings)
  }
}

/** The server's state as the popup says it: reachable, whether it asks people to sign in, and who is. */
async function status(settings: Settings): Promise<unknown> {
  const session = await readSession(settings.server)
  try {
    const response = await fetch(`${settings.server}/health`, { headers: session ? { Authorization: `Bearer ${session.token}` } : {}, credentials: 'omit', cache: 'no-store', signal: AbortSignal.timeout(5_000) })
    const body = (await response.json().catch(() => ({}))) as { signIn?: boolean; error?: { message?: string } }
    if (response.status === 403) return { server: settings.server, state: 'refused', message: `start it with --allow-origin ${self.location.origin} to let this extension in.`, who: null }
    if (!response.ok) return { server: settings.server, state: 'refused', message: body.error?.message ?? `HTTP ${response.status}`, who: null }
    // A POST carries the extension's origin (a GET may not): the server's answer says whether it lets the extension in, and who the session is.
    const me = await fetch(`${settings.server}/auth/me`, { method: 'POST', headers: session ? { Authorization: `Bearer ${session.token}` } : {}, credentials: 'omit', cache: 'no-store' })
    if (me.status === 403) {
      const refusal = ((await me.json().catch(() => ({}))) as { error?: { message?: string } }).error?.message ?? 'HTTP 403'
      return { server: settings.server, state: 'refused', message: refusal.startsWith('Origin') ? `start it with --allow-origin ${self.location.origin} to let this extension in.` : refusal, who: null }
    }
    let who = session ? { name: session.name } : null
    if (session && me.status === 401) {
      await forget(session)
      who = null
    }
    return { server: settings.server, state: 'up', signIn: body.signIn === true, who }
  } catch {
    return { server: settings.server, state: 'down', who: session ? { name: session.name } : null }
  }
}

const MARGIN = 16
const MAX_SIDE = 1600
const OUTLINE = '#e5484d'

/**
 * The annotated area from the browser's own picture of the tab: possible once the person has
 * opened the extension on the tab (activeTab); undefined otherwise (the overlay draws it then).
 */
async function capture(windowId: number, rect: { x: number; y: number; width: number; height: number }, viewport: { width: number; height: number }): Promise<string | undefined> {
  let dataUrl: string
  try {
    dataUrl = await chrome.tabs.captureVisibleTab(windowId, { format: 'png' })
  } catch {
    return undefined
  }
  const bitmap = await createImageBitmap(await (await fetch(dataUrl)).blob())
  const scale = bitmap.width / viewport.width
  const x0 = Math.max(0, rect.x - MARGIN)
  const y0 = Math.max(0, rect.y - MARGIN)
  const x1 = Math.min(viewport.width, rect.x + rect.width + MARGIN)
  const y1 = Math.min(viewport.height, rect.y + rect.height + MARGIN)
  if (x1 - x0 < 1 || y1 - y0 < 1) return undefined
  const fit = Math.min(1, MAX_SIDE / ((x1 - x0) * scale), MAX_SIDE / ((y1 - y0) * scale))
  const width = Math.round((x1 - x0) * scale * fit)
  const height = Math.round((y1 - y0) * scale * fit)
  const canvas = new OffscreenCanvas(width, height)
  const ctx = canvas.getContext('2d')
  if (!ctx) return undefined
  ctx.drawImage(bitmap, x0 * scale, y0 * scale, (x1 - x0) * scale, (y1 - y0) * scale, 0, 0, width, height)
  ctx.strokeStyle = OUTLINE
  ctx.lineWidth = 2
  const k = scale * fit
  ctx.strokeRect((rect.x - x0) * k, (rect.y - y0) * k, rect.width * k, rect.height * k)
  const blob = await canvas.convertToBlob({ type: 'image/png' })
  return base64Of(await blob.arrayBuffer())
}
