/**
 * Keyboard shortcuts. The annotate shortcut is configurable (`data-shortcut` on the
 * script tag, the Vite plugin's `shortcut` option), e.g. `Alt+Shift+A` (the default: it takes
 * nothing from Chrome, Firefox or Safari — Ctrl/Cmd+Shift+A is the browsers' tab search). No
 * shortcut fires while the person types in an input, a textarea or a contenteditable editor.
 * Keys pressed while focus is inside a same-origin iframe reach the overlay too.
 */

export interface Shortcut {
  /** `KeyboardEvent.code` of the key: layout-independent (Alt+Shift+A types "Å" on a Mac). */
  code: string
  alt: boolean
  shift: boolean
  ctrl: boolean
  meta: boolean
  /** How it reads: `Alt+Shift+A` (also the aria-keyshortcuts value). */
  text: string
}

export const DEFAULT_SHORTCUT = 'Alt+Shift+A'
/** Hide or show every pin. */
export const PINS_SHORTCUT = 'Alt+Shift+P'

const MODIFIERS: Record<string, 'alt' | 'shift' | 'ctrl' | 'meta'> = {
  alt: 'alt',
  option: 'alt',
  opt: 'alt',
  shift: 'shift',
  ctrl: 'ctrl',
  control: 'ctrl',
  meta: 'meta',
  cmd: 'meta',
  command: 'meta',
}

/** `"alt+shift+a"`, `"Ctrl+Alt+M"`, `"Alt+Shift+Period"`, `"F2"` → a shortcut; undefined when it is not one. */
export function parseShortcut(spec: string | undefined): Shortcut | undefined {
  if (!spec) return undefined
  const parts = spec.split('+').map((p) => p.trim()).filter(Boolean)
  const mods = { alt: false, shift: false, ctrl: false, meta: false }
  let code: string | undefined
  let keyText = ''
  for (const part of parts) {
    const mod = MODIFIERS[part.toLowerCase()]
    if (mod) {
      mods[mod] = true
      continue
    }
    if (code !== undefined) return undefined
    if (/^[a-z]$/i.test(part)) {
      code = `Key${part.toUpperCase()}`
      keyText = part.toUpperCase()
    } else if (/^[0-9]$/.test(part)) {
      code = `Digit${part}`
      keyText = part
    } else if (/^f([1-9]|1[0-2])$/i.test(part)) {
      code = part.toUpperCase()
      keyText = code
    } else if (/^[A-Z][A-Za-z0-9]+$/.test(part)) {
      // A KeyboardEvent.code as it is: Period, Backquote, Slash…
      code = part
      keyText = part
    } else return undefined
  }
  if (code === undefined) return undefined
  // A bare letter or digit would fire on every keystroke outside a text box.
  if (!mods.alt && !mods.ctrl && !mods.meta && !code.startsWith('F')) return undefined
  const text = [mods.ctrl && 'Ctrl', mods.alt && 'Alt', mods.shift && 'Shift', mods.meta && 'Meta', keyText].filter(Boolean).join('+')
  return { code, ...mods, text }
}

function matches(s: Shortcut, e: KeyboardEvent): boolean {
  return e.code === s.code && e.altKey === s.alt && e.shiftKey === s.shift && e.ctrlKey === s.ctrl && e.metaKey === s.meta
}

const NOT_TEXT = new Set(['button', 'checkbox', 'radio', 'submit', 'reset', 'range', 'color', 'file', 'image', 'hidden'])

/** Whether the key goes into something the person types in (an input, a textarea, a contenteditable editor). */
function isTyping(e: KeyboardEvent): boolean {
  const t = (e.composedPath()[0] ?? e.target) as (Element & { isContentEditable?: boolean; type?: string }) | null
  if (!t || typeof t.localName !== 'string') return false
  if (t.isContentEditable) return true
  if (t.localName === 'textarea' || t.localName === 'select') return true
  return t.localName === 'input' && !NOT_TEXT.has((t.type ?? 'text').toLowerCase())
}

/**
 * Hears keydown in the same-origin iframes focus is in (nested ones too, and again after one
 * navigates), so the overlay's keys work wherever focus is; the window's own keydown is the
 * overlay's. No scan of the page and no observer of its changes: focus going into a frame, or from
 * one frame to another, blurs a window heard here (the top one, or the frame it leaves), and the
 * frames focus is in are then found from the top document down, each through its focused element.
 */
export class FrameKeys {
  /** Windows whose blur is heard (the top one and each frame's). */
  private readonly followed = new Set<Window>()
  /** Frame windows with the keydown listener. */
  private readonly windows = new Set<Window>()
  private readonly frames = new WeakSet<Element>()
  /** Documents listened to: a frame that navigates keeps its window but loses its listeners. */
  private readonly docs = new WeakSet<Document>()
  private stopped = false

  constructor(private readonly handler: (e: KeyboardEvent) => void) {}

  start(): void {
    this.stopped = false
    this.follow(window)
    this.walk()
  }

  stop(): void {
    this.stopped = true
    for (const w of this.followed) {
      try {
        w.removeEventListener('blur', this.onBlur)
        if (this.windows.has(w)) w.removeEventListener('keydown', this.handler, true)
      } catch {
        // gone
      }
    }
    this.followed.clear()
    this.windows.clear()
  }

  private follow(win: Window): void {
    this.followed.add(win)
    win.addEventListener('blur', this.onBlur)
  }

  private readonly onBlur = (): void => {
    this.walk()
    // From one frame to another, the first is blurred before the second has the focus: looked at again once it has.
    setTimeout(this.walk, 0)
  }

  /** The frames focus is in, from the top document down: each listened to. */
  private readonly walk = (): void => {
    if (this.stopped) return
    let doc: Document | null = document
    for (let depth = 0; doc && depth < 16; depth++) {
      const f: Element | null = doc.activeElement
      if (!f || (f.localName !== 'iframe' && f.localName !== 'frame')) return
      if (!this.frames.has(f)) {
        this.frames.add(f)
        // A frame that navigates gets a new document: listen again.
        f.addEventListener('load', () => this.listen(f as HTMLIFrameElement))
      }
      this.listen(f as HTMLIFrameElement)
      try {
        doc = (f as HTMLIFrameElement).contentDocument
      } catch {
        return // cross-origin
      }
    }
  }

  private listen(f: HTMLIFrameElement): void {
    if (this.stopped) return
    try {
      const win = f.contentWindow
      const doc = f.contentDocument
      if (!win || !doc) return
      if (this.docs.has(doc)) return
      this.docs.add(doc)
      win.addEventListener('keydown', this.handler, true)
      this.windows.add(win)
      this.follow(win)
    } catch {
      // cross-origin: its keys stay its own
    }
  }
}

/** What the overlay's keys do (the controller knows which panel is open). */
export interface OverlayKeys {
  toggleAnnotate(): void
  togglePins(): void
  /** Close the innermost open thing; false when nothing was open. */
  escape(): boolean
  /** In annotate mode, Enter on a focused page element annotates it; false when it did not. */
  pickFocused(e: KeyboardEvent): boolean
}

/** The overlay's keydown listener: its shortcuts (never while the person types), Esc, and Enter to pick; a key it handled goes no further. */
export function overlayKeyListener(annotate: Shortcut, keys: OverlayKeys): (e: KeyboardEvent) => void {
  const pins = parseShortcut(PINS_SHORTCUT)!
  return (e) => {
    let handled = true
    if (matches(annotate, e) && !isTyping(e)) keys.toggleAnnotate()
    else if (matches(pins, e) && !isTyping(e)) keys.togglePins()
    else if (e.key === 'Escape') handled = keys.escape()
    else handled = keys.pickFocused(e)
    if (handled) {
      e.preventDefault()
      e.stopPropagation()
    }
  }
}
