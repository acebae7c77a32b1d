/**
 * The person's consent before an agent sees anything of a page that is not a local dev server:
 * an agent's `annotate` or `capture` on a staging or production site (logged-in data) waits for
 * "The agent asks to see `form#transfer` — Allow once / Always on this site / Deny". "Always" is
 * remembered for the site (its localStorage, `marginalia:agent-may-see`); a local dev origin
 * (localhost, 127.0.0.1, ::1, *.localhost) is the developer's own app and asks nothing. What the
 * person picks themselves (an annotation, pointing at an element) needs no asking.
 *
 * The page's own script can write that key too: it holds the page's data already, so it gives
 * away nothing it could not send itself. What it cannot do is take the person's data from a
 * site it does not run on.
 */
import { h } from '../../shared/dom.js'

const CONSENT_KEY = 'marginalia:agent-may-see'

type ConsentAnswer = 'once' | 'always' | 'deny'

/** A local dev origin: the developer's own app on their machine. */
function isLocalDevOrigin(hostname = location.hostname): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '')
  return host === 'localhost' || host === '127.0.0.1' || host === '::1' || host.endsWith('.localhost')
}

function remembered(): boolean {
  try {
    return localStorage.getItem(CONSENT_KEY) === 'always'
  } catch {
    return false
  }
}

function remember(): void {
  try {
    localStorage.setItem(CONSENT_KEY, 'always')
  } catch {
    // storage off: asked again next time
  }
}

let queue: Promise<unknown> = Promise.resolve()

/**
 * Whether the agent may see `what` (a selector, or "this page") now: true at once on a local dev
 * origin or where the person said "Always"; otherwise the question, in the overlay's shadow root,
 * one at a time. `expiresAt`: nobody waits after it (the question goes, the answer is no).
 */
export function mayAgentSee(shadow: ShadowRoot | null, what: string, expiresAt: number): Promise<boolean> {
  if (isLocalDevOrigin() || remembered()) return Promise.resolve(true)
  if (!shadow) return Promise.resolve(false)
  const asked = queue.then(() => (remembered() ? 'always' : ask(shadow, what, expiresAt)))
  queue = asked.catch(() => undefined)
  return asked.then((answer) => {
    if (answer === 'always') remember()
    return answer !== 'deny'
  })
}

function ask(shadow: ShadowRoot, what: string, expiresAt: number): Promise<ConsentAnswer> {
  return new Promise((resolve) => {
    const left = expiresAt - Date.now()
    if (left <= 0) return resolve('deny')
    const done = (answer: ConsentAnswer): void => {
      clearTimeout(timer)
      box.remove()
      resolve(answer)
    }
    const button = (label: string, answer: ConsentAnswer) => {
      const b = h('button', { type: 'button', class: `btn consent-${answer}`, onclick: () => done(answer) }, label)
      Object.assign(b.style, { marginRight: '6px' })
      return b
    }
    const box = h(
      'div',
      { class: 'consent', role: 'alertdialog', 'aria-label': 'An agent asks to see part of this page' },
      h('p', {}, 'The agent asks to see ', h('code', {}, what), ` on ${location.host}.`),
      h('div', {}, button('Allow once', 'once'), button('Always on this site', 'always'), button('Deny', 'deny')),
    )
    // CSSOM, not a style attribute: a page's style-src cannot block it.
    Object.assign(box.style, {
      position: 'fixed', right: '16px', bottom: '72px', pointerEvents: 'auto', zIndex: '2147483647', maxWidth: '360px', padding: '12px 14px',
      background: '#fff', color: '#1f2328', border: '1px solid #d0d7de', borderRadius: '8px', boxShadow: '0 8px 24px rgba(0,0,0,.2)', font: '14px system-ui, sans-serif',
    })
    const timer = setTimeout(() => done('deny'), left)
    shadow.append(box)
    box.querySelector<HTMLButtonElement>('.consent-deny')?.focus()
  })
}
