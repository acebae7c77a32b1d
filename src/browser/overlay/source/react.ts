/**
 * React's dev runtime: the host element's fiber (`__reactFiber$…`), its owner chain for the
 * component names, and `_debugSource` (React ≤ 18: exact file and line). React 19 dropped
 * `_debugSource`; there the owner's `_debugStack` names the generated file and line, which the
 * page's own source maps turn back into the original (see sourcemap.ts).
 */
import type { SourceLocation, SourcePoint } from '../../../store/source-location.js'
import { originalPosition } from './sourcemap.js'

/**
 * A fiber, or the owner React 19 records for a Server Component (a ReactComponentInfo: `name`,
 * `owner`, `debugStack`, as the RSC payload carries it; its stack frames name the server's chunks).
 */
type Fiber = {
  type?: unknown
  name?: unknown
  _debugOwner?: Fiber | null
  owner?: Fiber | null
  _debugSource?: { fileName?: string; lineNumber?: number; columnNumber?: number } | null
  _debugStack?: { stack?: string } | null
  debugStack?: { stack?: string } | null
  return?: Fiber | null
}

const ownerOf = (f: Fiber): Fiber | null | undefined => f._debugOwner ?? f.owner
const stackOf = (f: Fiber): string | undefined => f._debugStack?.stack ?? f.debugStack?.stack
const ownerName = (f: Fiber): string | undefined => nameOf(f.type) ?? (typeof f.name === 'string' && f.name ? f.name : undefined)

const MAX_COMPONENTS = 8

function fiberOf(el: Element): Fiber | undefined {
  for (const key in el) if (key.startsWith('__reactFiber$')) return (el as unknown as Record<string, Fiber>)[key]
  return undefined
}

function nameOf(type: unknown): string | undefined {
  if (typeof type === 'function') return ((type as { displayName?: string }).displayName ?? type.name) || undefined
  if (typeof type === 'object' && type !== null) {
    const t = type as { displayName?: string; render?: unknown; type?: unknown }
    return t.displayName ?? nameOf(t.render) ?? nameOf(t.type)
  }
  return undefined
}

const LIBRARY = /\/node_modules\/|react-dom|react_jsx|jsx-dev-runtime|jsx-runtime|\/@react-refresh/

/**
 * The first app frame of a React 19 `_debugStack`, mapped to its original file and line. Each
 * frame is mapped before it is judged: in a bundle (webpack, rspack) React's own frames share the
 * app's URL, so only the original file tells a library frame from the app's.
 */
function appPosition(stack: string): { file: string; line: number; column: number } | undefined {
  for (const line of stack.split('\n').slice(1)) {
    // A Server Component's frame may hold parentheses in its URL (`…?id=…+(ecmascript)?17:38:264`).
    const m = /\(?((?:https?|file|webpack-internal):\/\/\S+?):(\d+):(\d+)\)?\s*$/.exec(line)
    if (!m || LIBRARY.test(m[1]!)) continue
    const pos = originalPosition(m[1]!, Number(m[2]), Number(m[3]))
    if (pos && !LIBRARY.test(pos.file)) return pos
  }
  return undefined
}

export function reactSource(el: Element): SourceLocation | undefined {
  for (let n: Element | null = el; n; n = n.parentElement) {
    const fiber = fiberOf(n)
    if (!fiber) continue
    const names: string[] = []
    for (let o = ownerOf(fiber); o && names.length < MAX_COMPONENTS; o = ownerOf(o)) {
      const name = ownerName(o)
      if (name) names.unshift(name.slice(0, 200))
    }
    const out: SourceLocation = { via: 'react-fiber', exact: false }
    if (names.length) {
      out.component = names.at(-1)!
      out.components = names
    }
    const src = fiber._debugSource
    if (src?.fileName) {
      out.file = src.fileName.slice(0, 1000)
      if (src.lineNumber) out.line = src.lineNumber
      if (src.columnNumber) out.column = src.columnNumber
      out.exact = n === el
    } else if (stackOf(fiber)) {
      const pos = appPosition(stackOf(fiber)!)
      if (pos) {
        out.file = pos.file.slice(0, 1000)
        out.line = pos.line
        out.column = pos.column
        out.exact = n === el
      }
    }
    return out
  }
  return undefined
}

/**
 * Where the app uses the shared component that renders `el`: the nearest owner whose element
 * was created outside the shared folder (React ≤ 18 `_debugSource`, React 19 `_debugStack`).
 */
export function reactCallSite(el: Element, shared: (file: string) => boolean): SourcePoint | undefined {
  const fiber = fiberOf(el)
  for (let o = fiber && ownerOf(fiber), depth = 0; o && depth < 20; o = ownerOf(o), depth++) {
    let at: SourcePoint | undefined
    if (o._debugSource?.fileName) at = { file: o._debugSource.fileName, ...(o._debugSource.lineNumber ? { line: o._debugSource.lineNumber } : {}) }
    else if (stackOf(o)) {
      const pos = appPosition(stackOf(o)!)
      if (pos) at = pos
    }
    if (at && !shared(at.file)) {
      const next = ownerOf(o)
      const owner = next && ownerName(next)
      return { ...at, file: at.file.slice(0, 1000), ...(owner ? { component: owner.slice(0, 200) } : {}) }
    }
  }
  return undefined
}
