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
    const exact = reactCallSite(marked, (f) => SHARED_UI.test(f))
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

type AngularDebug = { className?: unknown; filePath?: unknown; lineNumber?: unknown }
type AngularDev = {
  getComponent?: (e: Element) => unknown
  getOwningComponent?: (e: Element) => unknown
  getHostElement?: (c: unknown) => Element | null
}

/** A component instance's class name and, in dev mode, where its class is written (`ɵcmp.debugInfo`). */
function angularClass(instance: unknown): { name: string; file?: string; line?: number } | undefined {
  const ctor = (instance as { constructor?: { name?: string; ɵcmp?: { debugInfo?: AngularDebug } } } | null)?.constructor
  if (!ctor) return undefined
  const info = ctor.ɵcmp?.debugInfo
  const name = typeof info?.className === 'string' ? info.className : typeof ctor.name === 'string' ? ctor.name.replace(/^_+/, '') : ''
  if (!name) return undefined
  const out: { name: string; file?: string; line?: number } = { name: name.slice(0, 200) }
  if (typeof info?.filePath === 'string' && info.filePath) out.file = info.filePath.slice(0, 1000)
  if (typeof info?.lineNumber === 'number' && Number.isInteger(info.lineNumber) && info.lineNumber > 0) out.line = info.lineNumber
  return out
}

/**
 * Angular in dev mode (the `ng` global): the component whose template writes the element
 * (`getOwningComponent`; a root component's own host: `getComponent`), the chain of components
 * around it through their host elements, and the file and line of the component's class from its
 * dev debug info — the class, not the element's line in the template (`exact: false`).
 */
function angularSource(el: Element): SourceLocation | undefined {
  const ng = (window as unknown as { ng?: AngularDev }).ng
  if (!ng?.getOwningComponent) return undefined
  let owner: unknown
  for (let n: Element | null = el; n && !owner; n = n.parentElement) owner = ng.getOwningComponent(n) ?? ng.getComponent?.(n)
  const own = angularClass(owner)
  if (!own) return undefined
  const names = [own.name]
  let at = owner
  for (let i = 1; i < MAX_COMPONENTS && ng.getHostElement; i++) {
    const host = ng.getHostElement(at)
    const outer = host ? ng.getOwningComponent(host) : null
    const cls = outer ? angularClass(outer) : undefined
    if (!cls || outer === at) break
    names.unshift(cls.name)
    at = outer
  }
  const out: SourceLocation = { component: own.name, components: names, via: 'angular', exact: false }
  if (own.file !== undefined) out.file = own.file
  if (own.line !== undefined) out.line = own.line
  return out
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
