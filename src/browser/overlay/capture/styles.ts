/** Computed styles that matter for visual bugs, sent with an annotation when the person asks. */
import { LIMITS } from '../../../store/vocabulary.js'
import { clip } from '../../shared/format.js'

const STYLE_PROPERTIES = [
  'display', 'position', 'width', 'height', 'margin', 'padding', 'box-sizing', 'font-family', 'font-size', 'font-weight',
  'line-height', 'color', 'background-color', 'border', 'border-radius', 'z-index', 'opacity', 'overflow', 'visibility', 'transform',
] as const

export function computedStyles(el: Element): Record<string, string> {
  const out: Record<string, string> = {}
  const cs = getComputedStyle(el)
  for (const p of STYLE_PROPERTIES) {
    const v = cs.getPropertyValue(p)
    if (v !== '') out[p] = clip(v, LIMITS.styleValue)
  }
  return out
}
