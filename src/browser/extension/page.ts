/**
 * What the extension runs in a listed page's own world, at document_start: the page log at once
 * (early.ts), then — when the extension's relay hands over its channel and says the site is on —
 * the overlay, once the DOM is ready, talking to the server only through the extension.
 */
import './early.js'
import type { Auth, SignedIn } from '../shared/auth.js'
import { Overlay } from '../overlay/overlay.js'
import { publicApi } from '../overlay/public-api.js'
import { ask, bridgeTransport, listen } from './bridge.js'
import { maskRects } from '../early/redact.js'
import { BRIDGE, type RelayMessage, type Who } from './messages.js'

/** Who is signed in, as the extension says (its session stays in the extension; the page sees only the name). */
class ExtensionAuth implements Auth {
  private readonly listeners = new Set<() => void>()

  constructor(private who: Who | null) {}

  get current(): SignedIn | undefined {
    const w = this.who
    if (!w || Date.parse(w.expiresAt) <= Date.now()) return undefined
    return { token: '', name: w.name, id: w.id, expiresAt: w.expiresAt }
  }

  set(session: SignedIn): void {
    this.update({ name: session.name, id: session.id, expiresAt: session.expiresAt })
  }

  clear(): void {
    this.update(null)
  }

  update(who: Who | null): void {
    this.who = who
    for (const l of [...this.listeners]) l()
  }

  headers(): Record<string, string> {
    return {} // the service worker adds the session
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}

/** The picture of the area from the browser's own view of the tab, the overlay hidden meanwhile; undefined when the extension may not take it. */
async function capture(port: MessagePort, box: DOMRect, exclude: Element | undefined): Promise<Blob | undefined> {
  const host = exclude instanceof HTMLElement ? exclude : undefined
  const before = host?.style.visibility ?? ''
  if (host) host.style.visibility = 'hidden'
  try {
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))
    // The browser's picture shows the page as it is: the worker paints over the secrets' boxes (early/redact.ts).
    const masks = maskRects(document, exclude).map((r) => ({ x: r.x, y: r.y, width: r.width, height: r.height }))
    const answer = await ask<{ png?: string }>(port, { type: 'capture', rect: { x: box.x, y: box.y, width: box.width, height: box.height }, viewport: { width: innerWidth, height: innerHeight }, masks })
    if (!answer.png) return undefined
    const raw = atob(answer.png)
    const bytes = new Uint8Array(raw.length)
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i)
    return new Blob([bytes], { type: 'image/png' })
  } catch {
    return undefined
  } finally {
    if (host) host.style.visibility = before
  }
}

function start(port: MessagePort): void {
  let auth: ExtensionAuth | undefined
  let overlay: Overlay | undefined
  listen(port, (e: MessageEvent) => {
    const m = e.data as RelayMessage
    if (m.type === 'config' && !auth) {
      const server = m.server
      const a = (auth = new ExtensionAuth(m.who))
      const boot = (): void => {
        if (window.Marginalia) return // the page loads the overlay itself
        overlay = new Overlay(server, {
          transport: bridgeTransport(port, server),
          auth: a,
          openSignIn: () => void ask(port, { type: 'openSignIn' }),
          capture: (box, exclude) => capture(port, box, exclude),
          maskInputs: m.maskInputs,
        })
        window.Marginalia = publicApi(overlay)
        overlay.mount()
      }
      if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot, { once: true })
      else boot()
    } else if (m.type === 'who' && auth) {
      const was = auth.current?.id
      auth.update(m.who)
      if (overlay && auth.current?.id !== was) {
        // Signed in or out from the extension: start over as that person (or as nobody).
        overlay.sync.stop()
        if (auth.current) {
          overlay.sync.start()
          void overlay.flush()
        }
      }
    }
  })
}

const onBridge = (e: MessageEvent): void => {
  const data = e.data as { type?: unknown } | null
  if (e.source !== window || data?.type !== BRIDGE || !e.ports[0]) return
  // Ours alone: no listener of the page hears it, and a later message posing as it finds nobody listening.
  e.stopImmediatePropagation()
  window.removeEventListener('message', onBridge, true)
  start(e.ports[0])
}
window.addEventListener('message', onBridge, true)
