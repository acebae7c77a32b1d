/**
 * Strict Content-Security-Policy. The overlay's styles are constructable stylesheets
 * (`adoptedStyleSheets`), which `style-src` does not govern, so a page without
 * `'unsafe-inline'` still shows it styled. What the page's policy does block — a request to the
 * Marginalia server under `connect-src`, an image under `img-src` — is heard through
 * `securitypolicyviolation` and said plainly, naming the directive and the value to add,
 * instead of "Server unreachable".
 */

/** Add `css` to a shadow root or a document without a `<style>` element; returns how to take it away. */
export function adoptStyles(root: ShadowRoot | Document, css: string): () => void {
  try {
    const sheet = new CSSStyleSheet()
    sheet.replaceSync(css)
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet]
    return () => {
      root.adoptedStyleSheets = root.adoptedStyleSheets.filter((s) => s !== sheet)
    }
  } catch {
    // No constructable stylesheets (before Safari 16.4): a <style> element, which a strict style-src blocks.
    const style = document.createElement('style')
    style.textContent = css
    style.setAttribute('data-marginalia', '')
    const parent = 'head' in root ? (root.head ?? root.documentElement) : root
    parent.appendChild(style)
    return () => style.remove()
  }
}

/** The directives of a policy: name → its source list. */
function directives(policy: string): Map<string, string[]> {
  const map = new Map<string, string[]>()
  for (const part of policy.split(';')) {
    const [name, ...values] = part.trim().split(/\s+/)
    if (name && !map.has(name.toLowerCase())) map.set(name.toLowerCase(), values)
  }
  return map
}

/**
 * Which directive a person should change for `effective` (e.g. `connect-src`) in `policy`: the
 * directive itself when the policy has it, else the one it falls back to (`script-src-elem` →
 * `script-src` → `default-src`).
 */
export function directiveToChange(effective: string, policy: string): string {
  const have = directives(policy)
  const chain = [effective]
  if (effective.endsWith('-elem') || effective.endsWith('-attr')) chain.push(effective.replace(/-(elem|attr)$/, ''))
  chain.push('default-src')
  return chain.find((d) => have.has(d)) ?? effective
}

/** What a person reads: "This page's Content-Security-Policy blocks Marginalia: add http://127.0.0.1:4848 to connect-src". */
function cspMessage(blocked: ReadonlyMap<string, string>): string {
  const parts = [...blocked].map(([directive, value]) => `add ${value} to ${directive}`)
  return `This page's Content-Security-Policy blocks Marginalia: ${parts.join('; ')}.`
}

export class CspWatch {
  /** Directive → the value to add to it. */
  readonly blocked = new Map<string, string>()
  private readonly origin: string

  constructor(
    server: string,
    /** The first time (and each new time) a directive blocks the overlay. */
    private readonly changed: (message: string) => void,
  ) {
    this.origin = new URL(server, location.href).origin
  }

  get message(): string | undefined {
    return this.blocked.size > 0 ? cspMessage(this.blocked) : undefined
  }

  start(): void {
    document.addEventListener('securitypolicyviolation', this.onViolation, true)
  }

  stop(): void {
    document.removeEventListener('securitypolicyviolation', this.onViolation, true)
  }

  private readonly onViolation = (e: SecurityPolicyViolationEvent): void => {
    if (e.disposition !== 'enforce') return
    let blockedOrigin: string
    try {
      blockedOrigin = new URL(e.blockedURI).origin
    } catch {
      return // 'inline', 'eval': not a request of ours
    }
    if (blockedOrigin !== this.origin) return
    // The page's own origin is 'self'; any other server is named by its origin.
    const value = this.origin === location.origin ? "'self'" : this.origin
    const directive = directiveToChange(e.effectiveDirective, e.originalPolicy)
    if (this.blocked.get(directive) === value) return
    this.blocked.set(directive, value)
    const message = this.message!
    console.warn(`Marginalia: ${message}`)
    this.changed(message)
  }
}
