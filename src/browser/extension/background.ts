/**
 * The extension's service worker (Firefox: its background script). It
 * - registers the page scripts for the listed sites whose permission the person granted, and
 *   for no other page (`chrome.scripting.registerContentScripts`, again whenever the settings or
 *   the permissions change);
 * - performs the overlay's requests on the configured server (a port per request, the body
 *   streamed back): named operations (operations.ts), never a URL from the page, each on the
 *   site's own sessions and annotations only, with the person's session added here: a page's
 *   Content-Security-Policy cannot block it, the token never enters the page, and a site's
 *   script that drives the overlay reaches nothing but what the overlay itself may do; the tabs'
 *   live streams share one connection to the server (stream-hub.ts), each tab sent its own part;
 * - draws screenshots from the browser's own view of the tab when it may;
 * - keeps the session the options page signs in with, and ends it on sign-out or a 401.
 */
import { matchPattern, readSession, readSettings, type Settings, type StoredSession } from './settings.js'
import type { PageMessage } from './messages.js'
import { OperationRefused, requestFor, type Operation } from './operations.js'
import { MASK_COLOUR } from '../early/redact.js'
import { StreamHub, type Frame, type Subscriber } from './stream-hub.js'

declare const __MARGINALIA_BROWSER__: 'chromium' | 'firefox'
const PORTLESS = typeof __MARGINALIA_BROWSER__ === 'string' && __MARGINALIA_BROWSER__ === 'firefox'

const SCRIPT_IDS = ['marginalia-page', 'marginalia-relay']

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
  port.onMessage.addListener((message) => void carry(port, message, controller).catch((e: unknown) => {
    try {
      if (e instanceof OperationRefused) answerWith(port, 403, 'Forbidden', JSON.stringify({ error: { code: 'REFUSED', message: e.message } }))
      else port.postMessage({ error: e instanceof Error ? e.message : String(e) })
      port.disconnect()
    } catch {
      // the page went away
    }
  }))
})

/**
 * Sessions and annotations proven to belong to a site (their page's origin is the site's), per
 * site: a site's page reads and writes only its own. Kept while the worker lives; a restarted
 * worker proves them again.
 */
const owned = new Map<string, Set<string>>()

function own(site: string, id: string): void {
  let ids = owned.get(site)
  if (!ids) owned.set(site, (ids = new Set()))
  ids.add(id)
}

function onSite(url: unknown, site: string): boolean {
  try {
    return typeof url === 'string' && new URL(url).origin === site
  } catch {
    return false
  }
}

type Proof = { ok: true } | { ok: false; status: number; text: string }
const NOT_FOUND = (what: string): Proof => ({ ok: false, status: 404, text: JSON.stringify({ error: { code: 'NOT_FOUND', message: `No ${what} of this site.` } }) })

/** Whether session `id` is the site's (asked of the server once); the server's own refusal (a 404) is passed on. */
async function provenSession(site: string, id: string, send: (url: string) => Promise<Response>, server: string): Promise<Proof> {
  if (owned.get(site)?.has(id)) return { ok: true }
  const response = await send(`${server}/api/sessions/${id}?limit=1`)
  const text = await response.text()
  if (!response.ok) return { ok: false, status: response.status, text }
  if (!onSite(parse(text)?.url, site)) return NOT_FOUND('session')
  own(site, id)
  return { ok: true }
}

/** Whether annotation `id` is in one of the site's sessions. */
async function provenAnnotation(site: string, id: string, send: (url: string) => Promise<Response>, server: string): Promise<Proof> {
  if (owned.get(site)?.has(id)) return { ok: true }
  const response = await send(`${server}/api/annotations/${id}`)
  const text = await response.text()
  if (!response.ok) return { ok: false, status: response.status, text }
  const sessionId = parse(text)?.sessionId
  if (typeof sessionId !== 'string' || !/^ses_[A-Za-z0-9]+$/.test(sessionId)) return NOT_FOUND('annotation')
  const session = await provenSession(site, sessionId, send, server)
  if (session.ok) own(site, id)
  return session.ok ? session : NOT_FOUND('annotation')
}

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/** A whole answer at once: head, the text, the end. */
function answerWith(port: chrome.runtime.Port, status: number, statusText: string, text: string, contentType = 'application/json; charset=utf-8'): void {
  port.postMessage({ status, statusText, contentType })
  if (text !== '') port.postMessage({ chunk: text })
  port.postMessage({ end: true })
}

/**
 * One operation of a listed site's page: checked (`requestFor`: a named operation, ids of their
 * kind, known query values), scoped to the site's own sessions and annotations, sent with the
 * person's session to the URL the worker builds, and answered back.
 */
async function carry(port: chrome.runtime.Port, message: unknown, controller: AbortController): Promise<void> {
  const settings = await readSettings()
  const site = listedSite(port.sender, settings)
  if (!site) throw new Error('Marginalia is not on for this site.')
  const server = settings.server.replace(/\/+$/, '')
  const request = requestFor(message, server)
  const op: Operation = request.op
  const session = await readSession(settings.server)
  const auth: Record<string, string> = session ? { Authorization: `Bearer ${session.token}` } : {}
  const get = (url: string): Promise<Response> => fetch(url, { headers: auth, credentials: 'omit', cache: 'no-store', signal: controller.signal })

  let proof: Proof = { ok: true }
  if (op.annotation !== undefined) proof = await provenAnnotation(site, op.annotation, get, server)
  else if (op.session !== undefined) proof = await provenSession(site, op.session, get, server)
  else if (op.op === 'createSession' && !onSite(parse(op.body ?? '')?.url, site)) throw new OperationRefused(`a session for a page of ${site} only`)
  if (!proof.ok) return void (answerWith(port, proof.status, proof.status === 404 ? 'Not Found' : 'Refused', proof.text), port.disconnect())

  // The live streams: one to the server for every tab (./stream-hub.ts), each tab sent its own part.
  if (op.op === 'sessionEvents' || op.op === 'newSessionEvents') {
    const since = op.query?.lastEventId === undefined ? undefined : Number(op.query.lastEventId)
    hubFor(server, session).subscribe(subscriberOn(port, op.op === 'sessionEvents' ? sessionFrames(op.session!) : siteFrames(site)), since, controller.signal)
    return
  }
  const headers: Record<string, string> = { ...auth }
  if (request.contentType) headers['Content-Type'] = request.contentType
  const response = await fetch(request.url, { method: request.method, headers, body: request.body ?? null, signal: controller.signal, credentials: 'omit', cache: 'no-store' })
  if (session && (response.status === 401 || op.op === 'signOut')) await forget(session)
  const contentType = response.headers.get('content-type') ?? ''

  // Answers that list more than the site's own: only the site's part goes back.
  if (response.ok && (op.op === 'listSessions' || op.op === 'readSession' || op.op === 'createSession')) {
    const body = parse(await response.text()) ?? {}
    if (op.op === 'listSessions') {
      const sessions = Array.isArray(body.sessions) ? (body.sessions as { id?: unknown; url?: unknown }[]).filter((s) => onSite(s.url, site)) : []
      for (const s of sessions) if (typeof s.id === 'string') own(site, s.id)
      body.sessions = sessions
    } else if (!onSite(body.url, site)) {
      const refused = NOT_FOUND('session')
      return void (answerWith(port, 404, 'Not Found', refused.ok ? '' : refused.text), port.disconnect())
    } else if (typeof body.id === 'string') own(site, body.id)
    answerWith(port, response.status, response.statusText, JSON.stringify(body), contentType)
    return void port.disconnect()
  }
  if (response.ok && op.op === 'addAnnotation') {
    const text = await response.text()
    const id = parse(text)?.id
    if (typeof id === 'string') own(site, id)
    answerWith(port, response.status, response.statusText, text, contentType)
    return void port.disconnect()
  }

  port.postMessage({ status: response.status, statusText: response.statusText, contentType })
  if (response.body) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (value !== '') port.postMessage({ chunk: value })
    }
  }
  port.postMessage({ end: true })
  port.disconnect()
}

/** The shared stream of a server, per person signed in (their session sees what they may see). */
const hubs = new Map<string, StreamHub>()

function hubFor(server: string, session: StoredSession | undefined): StreamHub {
  const key = `${server} ${session?.token ?? ''}`
  // A server or a person no longer used (a sign-out, a new server) leaves a hub with nothing open: let it go.
  for (const [k, h] of hubs) if (k !== key && h.upstreams === 0) hubs.delete(k)
  let hub = hubs.get(key)
  if (!hub) {
    hub = new StreamHub(async (lastEventId, signal) => {
      const url = `${server}/api/events${lastEventId === undefined ? '' : `?lastEventId=${lastEventId}`}`
      const response = await fetch(url, { headers: { Accept: 'text/event-stream', ...(session ? { Authorization: `Bearer ${session.token}` } : {}) }, signal, credentials: 'omit', cache: 'no-store' })
      if (session && response.status === 401) await forget(session)
      return response
    })
    hubs.set(key, hub)
  }
  return hub
}

/** A tab's stream on its port. */
function subscriberOn(port: chrome.runtime.Port, keeps: (frame: Frame) => boolean): Subscriber {
  const post = (message: unknown): void => {
    try {
      port.postMessage(message)
    } catch {
      // the page went away
    }
  }
  return {
    keeps,
    head: (status, statusText, contentType) => post({ status, statusText, contentType }),
    send: (text) => post({ chunk: text }),
    end: () => {
      post({ end: true })
      port.disconnect()
    },
    refuse: (status, statusText, text, contentType) => {
      try {
        answerWith(port, status, statusText, text, contentType)
        port.disconnect()
      } catch {
        // the page went away
      }
    },
  }
}

/** Frames that are no store event: presence, a reset, comments. */
const NOT_AN_EVENT = (frame: Frame): boolean => frame.type === 'presence' || frame.type === 'reset' || !frame.hasData

/** A session's stream: its own events. */
function sessionFrames(sessionId: string): (frame: Frame) => boolean {
  return (frame) => NOT_AN_EVENT(frame) || frame.data?.sessionId === sessionId
}

/** The stream of every session, cut to what a site's page may hear: the creation of a session of the site. */
function siteFrames(site: string): (frame: Frame) => boolean {
  return (frame) => {
    if (NOT_AN_EVENT(frame)) return true
    if (frame.type !== 'session.created') return false
    const session = frame.data?.session as { id?: unknown; url?: unknown } | undefined
    if (!session || !onSite(session.url, site)) return false
    if (typeof session.id === 'string') own(site, session.id)
    return true
  }
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
      return { png: await capture(sender.tab.windowId, message.rect, message.viewport, Array.isArray(message.masks) ? message.masks.slice(0, 500) : []) }
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
type Box = { x: number; y: number; width: number; height: number }

async function capture(windowId: number, rect: Box, viewport: { width: number; height: number }, masks: Box[]): Promise<string | undefined> {
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
  // The secrets' boxes the page measured (early/redact.ts), painted over.
  ctx.fillStyle = MASK_COLOUR
  for (const m of masks) if ([m.x, m.y, m.width, m.height].every(Number.isFinite)) ctx.fillRect((m.x - x0) * scale * fit, (m.y - y0) * scale * fit, m.width * scale * fit, m.height * scale * fit)
  ctx.strokeStyle = OUTLINE
  ctx.lineWidth = 2
  const k = scale * fit
  ctx.strokeRect((rect.x - x0) * k, (rect.y - y0) * k, rect.width * k, rect.height * k)
  const blob = await canvas.convertToBlob({ type: 'image/png' })
  return base64Of(await blob.arrayBuffer())
}
