/**
 * Where each annotation is on the page now: its element found through its scopes and selector and
 * checked against its fingerprint (found, moved — found elsewhere by its fingerprint — or lost),
 * and for selected words their range. Remembered until `forget` (the follower calls it whenever
 * the page changes).
 */
import type { Annotation } from '../../shared/types.js'
import { clippers, rootOf } from './dom.js'
import { locate } from './fingerprint.js'
import { rangeOf } from './quote.js'

export type AnchorState = 'found' | 'moved' | 'lost'

export interface Anchor {
  state: AnchorState
  element: Element | null
  /** The quoted words, for an annotation on a text selection whose words are still there. */
  range: Range | null
  /** The element's clipping ancestors and frames, nearest first. */
  clip: Element[]
}

const LOST: Anchor = { state: 'lost', element: null, range: null, clip: [] }

export class Anchors {
  private readonly cache = new Map<string, Anchor>()

  constructor(
    /** The overlay's own host: never an annotation's element. */
    private readonly host: Element,
  ) {}

  of(a: Annotation): Anchor {
    const cached = this.cache.get(a.id)
    if (cached && (!cached.element || cached.element.isConnected)) return cached
    const anchor = this.resolve(a)
    this.cache.set(a.id, anchor)
    return anchor
  }

  forget(id?: string): void {
    if (id === undefined) this.cache.clear()
    else this.cache.delete(id)
  }

  private resolve(a: Annotation): Anchor {
    const info = a.element
    if (!info) return LOST
    const root = rootOf(info.scopes)
    if (!root) return LOST
    const verdict = locate(root, info.selector, info.fingerprint)
    const el = verdict.element
    if (!el || el === this.host || this.host.contains(el)) return LOST
    return { state: verdict.moved ? 'moved' : 'found', element: el, range: info.quote ? rangeOf(el, info.quote) : null, clip: clippers(el) }
  }
}
