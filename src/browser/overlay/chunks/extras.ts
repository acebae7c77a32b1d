/**
 * The chunk of pictures and sources: what Send needs — where the element comes from in the app's
 * source (`findSource`) and what goes with an annotation (`gather`: the screenshot, drawn by
 * modern-screenshot, the biggest part of the overlay; styles, role and name; uploads) — and the
 * picture an agent asks for (`answerCapture`). Fetched on first use or when the browser is idle,
 * never at page load (./load.ts).
 */
import type { NewAnnotation } from '../../shared/types.js'
import { gather } from '../capture/attach.js'
import { findSource } from '../source/index.js'

export { answerCapture } from '../capture/requests.js'

/** The annotation as sent: its source location, then its extras (capture/attach.ts). */
export function complete(body: NewAnnotation, ...rest: Parameters<typeof gather> extends [NewAnnotation, ...infer R] ? R : never): ReturnType<typeof gather> {
  const [target] = rest
  const source = findSource(target.element)
  return gather(source ? { ...body, source } : body, ...rest)
}
