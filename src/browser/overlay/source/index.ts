/**
 * Where the clicked element comes from in the app's source, best first: a
 * compile-time mark (`data-marginalia-source`, from `marginalia/vite` or `marginalia/webpack`)
 * on the element or its nearest marked ancestor; else what the framework's dev runtime knows —
 * React fibers, Vue 3 component instances, Svelte 5 `__svelte_meta`, Angular's `ng` global. A
 * mark is completed with the component chain and, for a shared UI component, its call site: from
 * React's fibers, Preact's virtual tree, Vue's instances or the compile-time call sites of Solid
 * (`data-marginalia-call`), Vue (`__marginaliaCall`, set by the template's vnode hook) and Astro
 * (`data-marginalia-astro-call` on the elements at the top of each .astro component).
 * Each result says how it was found (`via`) and whether file:line is the element itself (`exact`).
 */
import type { SourceLocation, SourcePoint } from '../../../store/source-location.js'
import { preactFacts } from './preact.js'
import { reactCallSite, reactSource } from './react.js'

const SOURCE_ATTR = 'data-marginalia-source'
const ID_ATTR = 'data-mid'
const CALL_ATTR = 'data-marginalia-call'
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

/** A compile-time call site, `Name@file:line:column`: where a component is used. */
interface Call {
  name: string
  at: SourcePoint
}
function parseCall(raw: unknown): Call | undefined {
  if (typeof raw !== 'string') return undefined
  const i = raw.indexOf('@')
  const at = i > 0 ? parseMark(raw.slice(i + 1)) : undefined
  return at ? { name: raw.slice(0, i).slice(0, 200), at } : undefined
}

/** Solid: the elements its components return carry their call sites (`data-marginalia-call`), innermost first. */
function domCalls(from: Element): { el: Element; call: Call }[] {
  const out: { el: Element; call: Call }[] = []
  for (let n = from.closest(`[${CALL_ATTR}]`); n && out.length < 40; n = n.parentElement?.closest(`[${CALL_ATTR}]`) ?? null) {
    const call = parseCall(n.getAttribute(CALL_ATTR))
    if (call) out.push({ el: n, call })
  }
  return out
}

const ASTRO_CALL_ATTR = 'data-marginalia-astro-call'

/**
 * Astro: the .astro components around an element written in `file`, innermost first. The elements at
 * the top of each .astro component carry `<its file>|Name@file:line:column` (where it is used): the
 * first such element around `el` written for `file` is its component's, the next one for the file
 * that uses it is the component around that, and so on (islands and slot content are skipped over).
 */
function astroCalls(el: Element, file: string): Call[] {
  const out: Call[] = []
  for (let n = el.closest(`[${ASTRO_CALL_ATTR}]`); n && out.length < MAX_COMPONENTS; n = n.parentElement?.closest(`[${ASTRO_CALL_ATTR}]`) ?? null) {
    const [own, raw] = (n.getAttribute(ASTRO_CALL_ATTR) ?? '').split('|')
    const call = own === file ? parseCall(raw) : undefined
    if (call) file = out[out.push(call) - 1]!.at.file
  }
  return out
}

type Instance = Props & { parent?: Instance | null; type?: Props; [CALL_KEY]?: unknown }
const CALL_KEY = '__marginaliaCall'

/** Vue: the component instance that renders `el`, and those around it (innermost first), with where each is used (`__marginaliaCall`, stamped by the template's vnode hook). */
function vueInstances(el: Element): Instance[] {
  let n: Element | null = el
  while (n && !(n as unknown as Props).__vueParentComponent) n = n.parentElement
  const out: Instance[] = []
  for (let inst = n ? ((n as unknown as Props).__vueParentComponent as Instance | undefined) : undefined; inst && out.length < 40; inst = inst.parent ?? undefined) out.push(inst)
  return out
}
const vueFile = (inst: Instance): string | undefined => (typeof inst.type?.__file === 'string' ? inst.type.__file : undefined)
const vueName = (inst: Instance): string | undefined => {
  const f = vueFile(inst)
  const name = inst.type?.name ?? inst.type?.__name ?? (f ? f.replace(/^.*\//, '').replace(/\.vue$/, '') : undefined)
  return typeof name === 'string' ? name.slice(0, 200) : undefined
}
/** Whether absolute-or-relative `file` (a Vue `__file`) is the project-relative `rel`. */
const sameFile = (file: string | undefined, rel: string): boolean => file !== undefined && (file === rel || file.endsWith(`/${rel}`))

/**
 * Where a component that renders no marked element of its own (a library's: RouterLink, a UI kit's
 * button) is used, when `el` is rendered by it: the element is attributed to that call site.
 */
function libraryCall(el: Element, marked: Element | null): SourceLocation | undefined {
  if (marked === el) return undefined
  const dom = domCalls(el)[0]
  if (dom && (!marked || (marked !== dom.el && marked.contains(dom.el)))) return { ...dom.call.at, component: dom.call.name, components: [dom.call.name], via: 'mark', exact: dom.el === el }
  const [inst] = vueInstances(el)
  const call = parseCall(inst?.[CALL_KEY])
  if (!inst || !call) return undefined
  const markedInst = marked ? vueInstances(marked)[0] : undefined
  if (markedInst === inst) return undefined
  return { ...call.at, component: call.name, components: [call.name], via: 'mark', exact: true }
}

/** The component chain (outermost first) for an element written in `file`, from compile-time call sites (Solid) or Vue's instances; slot content is its writer's. */
function markedComponents(el: Element, file: string): string[] | undefined {
  const dom = domCalls(el)
  if (dom.length > 0) {
    // A call site in the element's own file is a component the element was handed to (its children): not its owner.
    const own = dom.findIndex((d) => d.call.at.file !== file)
    return own < 0 ? undefined : dom.slice(own, own + MAX_COMPONENTS).map((d) => d.call.name).reverse()
  }
  const insts = vueInstances(el)
  const own = insts.findIndex((i) => sameFile(vueFile(i), file))
  if (own < 0) return undefined
  const names = insts.slice(own).map(vueName).filter((n): n is string => n !== undefined)
  return names.length > 0 ? names.slice(0, MAX_COMPONENTS).reverse() : undefined
}

/** Where the app uses the shared UI component that renders `marked`, from compile-time call sites (Solid, Vue). */
function markedCallSite(marked: Element, shared: (file: string) => boolean): SourcePoint | undefined {
  const dom = domCalls(marked)
  const i = dom.findIndex((d) => !shared(d.call.at.file))
  if (i >= 0) {
    // Its component: the one out whose element is written in the call site's file (not a component it is handed to as children).
    const file = dom[i]!.call.at.file
    const owner = (dom.slice(i + 1).find((d) => parseMark(d.el.getAttribute(SOURCE_ATTR) ?? '')?.file === file) ?? dom[i + 1])?.call.name
    return { ...dom[i]!.call.at, ...(owner ? { component: owner } : {}) }
  }
  const insts = vueInstances(marked)
  for (let k = 0; k < insts.length; k++) {
    const call = parseCall(insts[k]![CALL_KEY])
    if (call && !shared(call.at.file)) {
      // Slot content: the instance around it may be the component it was handed to; its owner is the one written in the call site's file.
      const around = insts.slice(k + 1)
      const by = around.find((i) => sameFile(vueFile(i), call.at.file)) ?? around[0]
      const owner = by && vueName(by)
      return { ...call.at, ...(owner ? { component: owner } : {}) }
    }
  }
  return undefined
}

function fromMark(el: Element): SourceLocation | undefined {
  const marked = el.closest(`[${SOURCE_ATTR}],[${ID_ATTR}]`)
  const library = libraryCall(el, marked)
  if (library) return library
  if (!marked) return undefined
  const raw = marked.getAttribute(SOURCE_ATTR)
  const here: SourceLocation = raw ? { ...parseMark(raw), via: 'mark', exact: marked === el } : { file: `#${marked.getAttribute(ID_ATTR) ?? ''}`, via: 'manifest', exact: marked === el }
  if (raw && here.file === undefined) return undefined
  const shared = (f: string) => SHARED_UI.test(f)
  const preact = here.file && !here.file.startsWith('#') ? preactFacts(marked, here.file, shared, MAX_COMPONENTS) : undefined
  const astro = raw ? astroCalls(marked, here.file!) : []
  if (here.file && !here.file.startsWith('#')) {
    const names = markedComponents(marked, here.file) ?? preact?.components ?? (astro[0] ? astro.map((c) => c.name).reverse() : undefined)
    if (names) {
      here.components = names
      here.component = names.at(-1)!
    }
  }
  if (here.file && SHARED_UI.test(here.file)) {
    // Astro: the first call outside the shared folder, and the component (or page) that writes it.
    const i = astro.findIndex((c) => !shared(c.at.file))
    const owner = i < 0 ? undefined : (astro[i + 1]?.name ?? componentOfFile(astro[i]!.at.file))
    const exact = reactCallSite(marked, shared) ?? markedCallSite(marked, shared) ?? (i < 0 ? undefined : { ...astro[i]!.at, ...(owner ? { component: owner } : {}) }) ?? svelteCallSite(marked) ?? preact?.callSite
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
