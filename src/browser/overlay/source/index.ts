/**
 * Where the clicked element comes from in the app's source, best first: a
 * compile-time mark (`data-marginalia-source`, from `marginalia/vite` or `marginalia/webpack`)
 * on the element or its nearest marked ancestor; else what the framework's dev runtime knows —
 * React fibers, Vue 3 component instances, Svelte 5 `__svelte_meta`, Angular's `ng` global.
 * Each result says how it was found (`via`) and whether file:line is the element itself (`exact`).
 */
import type { SourceLocation, SourcePoint } from '../../../store/source-location.js'
import { reactCallSite, reactSource } from './react.js'

const SOURCE_ATTR = 'data-marginalia-source'
const ID_ATTR = 'data-mid'
/** Folders of shared UI components: an element written there also gets the call site in the app's own code. */
const SHARED_UI = /(?:^|\/)(?:components\/ui|design-system|ui-kit)\//
const MAX_COMPONENTS = 8

/** `src/App.tsx:12:5` → its parts (the file may contain colons). */
function parseMark(mark: string): SourcePoint | undefined {
  const m = /^(.+?):(\d+)(?::(\d+))?$/.exec(mark)
  if (!m) return undefined
  const point: SourcePoint = { file: m[1]!.slice(0, 1000), line: Number(m[2]) }
  if (m[3] !== undefined) point.column = Number(m[3])
  return point
}

function fromMark(el: Element): SourceLocation | undefined {
  const marked = el.closest(`[${SOURCE_ATTR}],[${ID_ATTR}]`)
  if (!marked) return undefined
  const raw = marked.getAttribute(SOURCE_ATTR)
  const here: SourceLocation = raw ? { ...parseMark(raw), via: 'mark', exact: marked === el } : { file: `#${marked.getAttribute(ID_ATTR) ?? ''}`, via: 'manifest', exact: marked === el }
  if (raw && here.file === undefined) return undefined
  if (here.file && SHARED_UI.test(here.file)) {
    const exact = reactCallSite(marked, (f) => SHARED_UI.test(f)) ?? svelteCallSite(marked)
    if (exact) {
      here.callSite = exact
      return here
    }
    // Else the nearest marked ancestor written outside the shared folder: where the app uses the component.
    for (let a = marked.parentElement?.closest(`[${SOURCE_ATTR}]`); a; a = a.parentElement?.closest(`[${SOURCE_ATTR}]`)) {
      const p = parseMark(a.getAttribute(SOURCE_ATTR) ?? '')
      if (p && !SHARED_UI.test(p.file)) {
        here.callSite = p
        break
      }
    }
  }
  return here
}

type Props = Record<string, unknown>

function vueSource(el: Element): SourceLocation | undefined {
  for (let n: Element | null = el; n; n = n.parentElement) {
    let inst = (n as unknown as Props).__vueParentComponent as Props | undefined
    if (!inst) continue
    const names: string[] = []
    let file: string | undefined
    for (; inst && names.length < MAX_COMPONENTS; inst = inst.parent as Props | undefined) {
      const type = inst.type as Props | undefined
      const f = typeof type?.__file === 'string' ? type.__file : undefined
      const name = (type?.name ?? type?.__name ?? (f ? f.replace(/^.*\//, '').replace(/\.vue$/, '') : undefined)) as string | undefined
      if (typeof name === 'string') names.unshift(name.slice(0, 200))
      if (file === undefined && f) file = f
    }
    const out: SourceLocation = { via: 'vue', exact: false }
    if (file) out.file = file.slice(0, 1000)
    if (names.length) {
      out.component = names.at(-1)!
      out.components = names
    }
    return out
  }
  return undefined
}

interface SvelteFrame {
  type?: unknown
  file?: unknown
  line?: unknown
  column?: unknown
  parent?: SvelteFrame | null
}

/** Svelte 5 dev: the component tag, outside the shared folder, that renders `el` (its `__svelte_meta` parent frames). */
function svelteCallSite(el: Element): SourcePoint | undefined {
  let frame = ((el as unknown as Props).__svelte_meta as { parent?: SvelteFrame | null } | undefined)?.parent
  for (let depth = 0; frame && depth < 64; frame = frame.parent, depth++) {
    if (frame.type === 'component' && typeof frame.file === 'string' && !SHARED_UI.test(frame.file) && typeof frame.line === 'number') {
      const point: SourcePoint = { file: frame.file.slice(0, 1000), line: frame.line }
      if (typeof frame.column === 'number') point.column = frame.column + 1
      return point
    }
  }
  return undefined
}

/** The component a file defines when its name is the component's (Svelte, Astro, Vue single-file components). */
function componentOfFile(file: string | undefined): string | undefined {
  const m = /([^/]+)\.(?:svelte|astro|vue)$/.exec(file ?? '')
  return m?.[1]
}

function svelteSource(el: Element): SourceLocation | undefined {
  for (let n: Element | null = el; n; n = n.parentElement) {
    const meta = (n as unknown as Props).__svelte_meta as { loc?: { file?: string; line?: number; column?: number } } | undefined
    if (!meta?.loc?.file) continue
    const out: SourceLocation = { file: meta.loc.file.slice(0, 1000), via: 'svelte', exact: n === el }
    if (typeof meta.loc.line === 'number') out.line = meta.loc.line
    if (typeof meta.loc.column === 'number') out.column = meta.loc.column + 1
    out.component = meta.loc.file.replace(/^.*\//, '').replace(/\.svelte$/, '')
    return out
  }
  return undefined
}

function angularSource(el: Element): SourceLocation | undefined {
  const ng = (window as unknown as { ng?: { getComponent?: (e: Element) => unknown; getOwningComponent?: (e: Element) => unknown } }).ng
  if (!ng?.getOwningComponent) return undefined
  for (let n: Element | null = el; n; n = n.parentElement) {
    const c = ng.getComponent?.(n) ?? ng.getOwningComponent(n)
    const name = (c as { constructor?: { name?: string } } | null)?.constructor?.name
    if (name) return { component: name.replace(/^_+/, '').slice(0, 200), via: 'angular', exact: false }
  }
  return undefined
}

/** The best source location the page offers for `el`, or undefined. Never throws. */
export function findSource(el: Element): SourceLocation | undefined {
  for (const find of [fromMark, reactSource, vueSource, svelteSource, angularSource]) {
    try {
      const found = find(el)
      if (found && (found.file !== undefined || found.component !== undefined)) {
        if (found.via === 'mark' && !found.component) {
          // Component names from the runtime complete a mark.
          const names = reactSource(el) ?? vueSource(el)
          if (names?.components) {
            found.components = names.components
            found.component = names.component!
          } else {
            const own = componentOfFile(found.file)
            if (own) found.component = own
          }
        }
        return found
      }
    } catch {
      // A framework's internals changed shape: try the next way.
    }
  }
  return undefined
}
