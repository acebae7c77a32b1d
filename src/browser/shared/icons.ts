/**
 * The toolbar's icons, drawn as SVG strokes in the text's colour: a symbol character (✎, ❄, ⚙)
 * is in few fonts, and finding one that holds it is a fallback search through the system's fonts
 * on the page's main thread when the dock is first laid out.
 */
const SVG = 'http://www.w3.org/2000/svg'

/** Each icon's path on a 16 × 16 grid. */
const PATHS = {
  /** Annotate: a pencil. */
  pencil: 'M10.5 2.5l3 3-8 8H2.5v-3zM9 4l3 3',
  /** Freeze: a snowflake (three crossing strokes). */
  snowflake: 'M8 1.5v13M2.4 4.75l11.2 6.5M2.4 11.25l11.2-6.5M6.3 2.6 8 4.2l1.7-1.6M6.3 13.4 8 11.8l1.7 1.6',
  /** Settings: three sliders. */
  sliders: 'M2.5 4h11M2.5 8h11M2.5 12h11M5.5 2.5v3M10.5 6.5v3M7 10.5v3',
} as const

export type IconName = keyof typeof PATHS

export function icon(name: IconName): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg')
  svg.setAttribute('class', 'icon')
  svg.setAttribute('viewBox', '0 0 16 16')
  svg.setAttribute('aria-hidden', 'true')
  const path = document.createElementNS(SVG, 'path')
  path.setAttribute('d', PATHS[name])
  svg.appendChild(path)
  return svg
}
