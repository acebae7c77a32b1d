/**
 * An agent asks to see an annotation's element now (`capture.requested` on this page's session
 * stream), or resolved it asking for an "after" picture (`after` on the status change): once the next frames have settled (a hot reload has landed), the element is found again
 * as the pins find it, pictured as on send, uploaded, and named to the server as the answer. A
 * request heard after nobody waits for it any more (a replay after a reconnect) is left alone.
 * Off a local dev origin the person is asked first (consent.ts); a "Deny" answers the agent in
 * the thread. What is sent is redacted either way (early/redact.ts).
 */
import type { Api } from '../../shared/api.js'
import type { Annotation } from '../../shared/types.js'
import type { Anchor } from '../anchor/resolve.js'
import type { CaptureAsk } from '../sync/page-sync.js'
import { viewRect } from '../anchor/dom.js'
import { captureBox } from './screenshot.js'
import { describeElement, fitSelector, uniqueSelector } from '../anchor/describe.js'
import { mayAgentSee } from './consent.js'

interface CaptureDeps {
  api: Api
  /** The overlay's host: never in the picture. */
  host: Element
  /** The page's copy of the annotation, if loaded. */
  get(id: string): Annotation | undefined
  /** Where the annotation's element is now (found again, not from a cache). */
  anchor(a: Annotation): Anchor
  /** The agent looked: say so briefly. */
  looked(a: Annotation): void
}

/** Two frames (the page's own updates, then ours), or 100 ms where frames do not come (a hidden tab). */
function settle(): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 100)
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        clearTimeout(timer)
        resolve()
      }),
    )
  })
}

/** The element's box in this page's viewport, scrolled into view when it is outside. */
async function boxOf(element: Element): Promise<DOMRect> {
  let box = element.ownerDocument !== document ? viewRect(element) : element.getBoundingClientRect()
  if (box.bottom < 0 || box.top > window.innerHeight || box.right < 0 || box.left > window.innerWidth) {
    element.scrollIntoView({ block: 'center', inline: 'center' })
    await settle()
    box = element.ownerDocument !== document ? viewRect(element) : element.getBoundingClientRect()
  }
  return box
}

/** Take and send the picture a request asks for; false when it was not for this page or came too late. */
export async function answerCapture(e: CaptureAsk, deps: CaptureDeps): Promise<boolean> {
  if (Date.parse(e.expiresAt) < Date.now()) return false
  await settle()
  const a = deps.get(e.annotationId) ?? (await deps.api.annotation(e.annotationId).catch(() => undefined))
  if (!a) return false
  const anchor = deps.anchor(a)
  const element = anchor.state === 'lost' ? null : anchor.element
  // An agent's annotation is anchored only where its element is (another page of the app may open first).
  if (e.describe && !element) return false
  // Off a local dev origin, nothing leaves the page before the person allows it (consent.ts).
  const what = a.element?.selector ?? (element ? fitSelector(uniqueSelector(element)) : 'this page')
  if (!(await mayAgentSee(deps.host.shadowRoot, what, Date.parse(e.expiresAt)))) {
    await deps.api.reply(a.id, `Declined: the person did not let the agent see ${what} on ${location.host}.`).catch(() => undefined)
    return false
  }
  const described = e.describe && element ? describeElement(element) : undefined
  const box = element ? await boxOf(element) : new DOMRect(0, 0, window.innerWidth, window.innerHeight)
  const blob = await captureBox(box, deps.host)
  if (!blob) return false
  const attachment = await deps.api.upload(blob, 'screenshot')
  await deps.api.captured(a.id, {
    requestId: e.requestId,
    attachment,
    url: location.href,
    anchor: element ? (anchor.state === 'moved' ? 'moved' : 'found') : 'missing',
    capturedAt: new Date().toISOString(),
    ...(e.attachTo !== undefined ? { attachTo: e.attachTo } : {}),
    ...(described ? { element: described } : {}),
    ...(e.token !== undefined ? { token: e.token } : {}),
  })
  if (!described) deps.looked(a)
  return true
}
