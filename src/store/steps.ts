/**
 * Steps to reproduce as a person says them, one line each: `click button "Add to cart" (Chair)`,
 * `go to /cart`, `type "SAVE10" in textbox "Coupon code"`. The agent's answer, the inbox, the
 * Markdown export and the comments of a generated Playwright test all use these lines. Zod-free
 * (type imports only), so the browser bundles import it as a value.
 */
import type { Step, StepTarget } from './model.js'

const q = (s: string): string => JSON.stringify(s)

/** The element as a person names it: `button "Add to cart" (Chair)`, `textbox "Coupon code"`, `"Total"`, or its selector. */
function targetWords(t: StepTarget | undefined): string {
  if (!t) return 'the page'
  const name = t.name ?? t.text
  const near = t.near && t.near !== name ? ` (${t.near})` : ''
  if (t.role && name) return `${t.role} ${q(name)}${near}`
  if (name) return `${q(name)}${near}`
  if (t.testId) return `${t.role ?? t.tag ?? 'element'} [data-testid=${q(t.testId)}]${near}`
  if (t.selector) return `${t.role ? `${t.role} ` : ''}${t.selector}${near}`
  return `${t.role ?? t.tag ?? 'element'}${near}`
}

/**
 * A URL as short as it can be said: path, query and hash when it is on `base`'s origin (the
 * first page of the steps), else whole.
 */
function shortUrl(url: string | undefined, base?: string): string {
  if (!url) return '?'
  try {
    const u = new URL(url)
    const b = base ? new URL(base) : undefined
    return !b || b.origin === u.origin ? `${u.pathname}${u.search}${u.hash}` : u.href
  } catch {
    return url
  }
}

/** One step in words. `base`: the origin its URLs are said relative to. */
export function stepLine(s: Step, base?: string): string {
  const on = targetWords(s.target)
  switch (s.kind) {
    case 'click':
      return `click ${on}`
    case 'type':
      return s.value !== undefined ? `type ${q(s.value)} in ${on}` : `type (not recorded) in ${on}`
    case 'select':
      return s.value !== undefined ? `select ${q(s.value)} in ${on}` : `select (not recorded) in ${on}`
    case 'check':
      return `check ${on}`
    case 'uncheck':
      return `uncheck ${on}`
    case 'submit':
      return `submit ${on}`
    case 'key':
      return `press ${s.key ?? '?'}${s.target ? ` in ${on}` : ''}`
    case 'route':
      return `go to ${shortUrl(s.url, base)}`
    case 'navigate':
      return `open ${shortUrl(s.url, base)}`
    case 'scroll':
      return `scroll to ${s.x ?? 0}, ${s.y ?? 0}`
    case 'viewport':
      return `viewport ${s.width ?? 0}×${s.height ?? 0}`
  }
}

/** The first URL the steps were on (where a replay starts). */
export function firstUrl(steps: readonly Step[]): string | undefined {
  return steps.find((s) => s.url !== undefined && (s.kind === 'navigate' || s.kind === 'route'))?.url
}

/** The steps numbered, one line each, URLs relative to the first page's origin. */
export function stepLines(steps: readonly Step[]): string[] {
  const base = firstUrl(steps)
  return steps.map((s, i) => `${i + 1}. ${stepLine(s, base)}`)
}
