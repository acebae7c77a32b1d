/**
 * Preact's dev runtime: the render root keeps its virtual tree (`__k` on the container), each
 * virtual node its DOM node (`__e`), children (`__k`) and, from the dev JSX runtime, `__source`
 * (the file, line and column of the JSX that made it). From an element, the path down the tree
 * gives the component chain, and a component's `__source` is where it is used — its call site.
 */
import type { SourcePoint } from '../../../store/source-location.js'

interface VNode {
  type?: unknown
  __k?: (VNode | null)[] | null
  __e?: unknown
  __source?: { fileName?: unknown; lineNumber?: unknown; columnNumber?: unknown }
}

/** Enough for any page a person annotates; a bigger tree is not searched. */
const MAX_NODES = 50_000

const nameOf = (type: unknown): string | undefined => {
  if (typeof type !== 'function') return undefined
  const name = ((type as { displayName?: string }).displayName ?? type.name) || undefined
  return name === 'Fragment' ? undefined : name?.slice(0, 200)
}

/** The virtual nodes from the render root down to `el`'s own, or undefined when `el` is not Preact's. */
function pathTo(el: Element): VNode[] | undefined {
  let container: Element | null = el
  while (container && !isVNode((container as unknown as { __k?: unknown }).__k)) container = container.parentElement
  if (!container) return undefined
  const root = (container as unknown as { __k: VNode }).__k
  const stack: { node: VNode; depth: number }[] = [{ node: root, depth: 0 }]
  const path: VNode[] = []
  for (let seen = 0; stack.length > 0 && seen < MAX_NODES; seen++) {
    const { node, depth } = stack.pop()!
    path.length = depth
    path.push(node)
    if (node.__e === el && typeof node.type === 'string') return path
    const kids = Array.isArray(node.__k) ? node.__k : []
    for (let i = kids.length - 1; i >= 0; i--) if (isVNode(kids[i])) stack.push({ node: kids[i]!, depth: depth + 1 })
  }
  return undefined
}

function isVNode(v: unknown): v is VNode {
  return typeof v === 'object' && v !== null && 'type' in v && '__e' in v
}

/** `__source` as a point, its file made relative with `toRel`. */
function pointOf(v: VNode, toRel: (abs: string) => string): SourcePoint | undefined {
  const s = v.__source
  if (typeof s?.fileName !== 'string') return undefined
  const point: SourcePoint = { file: toRel(s.fileName).slice(0, 1000) }
  if (typeof s.lineNumber === 'number') point.line = s.lineNumber
  if (typeof s.columnNumber === 'number') point.column = s.columnNumber
  return point
}

export interface PreactFacts {
  /** The component chain, outermost first, ending at the component that wrote the element. */
  components?: string[]
  /** Where the innermost component whose call site passes `shared` is used. */
  callSite?: SourcePoint
}

/**
 * What Preact knows of `el`, written in `file` (project-relative, from its mark). Paths from the
 * dev runtime are absolute: the element's own `__source` ends with `file`, which gives the root.
 */
export function preactFacts(el: Element, file: string, shared: (file: string) => boolean, max: number): PreactFacts | undefined {
  const path = pathTo(el)
  if (!path) return undefined
  const own = path.at(-1)!.__source?.fileName
  const root = typeof own === 'string' && own.endsWith(`/${file}`) ? own.slice(0, own.length - file.length) : undefined
  const toRel = (abs: string): string => (root !== undefined && abs.startsWith(root) ? abs.slice(root.length) : abs)
  // Components innermost first; one used in the element's own file was handed the element as children: not its owner.
  // The root is render()'s Fragment (its name is minified in Preact's build): it and its kind are no component.
  const fragment = path[0]!.type
  const comps = path.filter((v) => v.type !== fragment && nameOf(v.type) !== undefined).reverse()
  const owner = comps.findIndex((v) => pointOf(v, toRel)?.file !== file)
  const facts: PreactFacts = {}
  if (owner >= 0) facts.components = comps.slice(owner, owner + max).map((v) => nameOf(v.type)!).reverse()
  for (let i = 0; i < comps.length; i++) {
    const at = pointOf(comps[i]!, toRel)
    if (at && !shared(at.file)) {
      const by = comps[i + 1] && nameOf(comps[i + 1]!.type)
      facts.callSite = { ...at, ...(by ? { component: by } : {}) }
      break
    }
  }
  return facts
}
