/**
 * The compile-time marking transform, shared by every bundler: it adds
 * `data-marginalia-source="<file relative to the root>:<line>:<column>"` (or, for preview
 * builds, `data-mid="<id>"`) to every host element the app's own source writes — JSX/TSX host
 * elements (lower-case tags; never components or fragments, so no component's props change),
 * the elements of a Vue SFC `<template>`, of Svelte 5 markup and of an Astro component's template.
 * It parses with a real parser (oxc-parser for JS/TS/JSX, Vue's, Svelte's and Astro's own
 * compilers for their files, loaded from the app) and edits with magic-string, so the page's source maps stay right.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import MagicString from 'magic-string'
import { parseSync } from 'oxc-parser'

const SOURCE_ATTR = 'data-marginalia-source'
const ID_ATTR = 'data-mid'

export interface MarkOptions {
  /** 'paths' (default in dev): file:line:column on each element; 'ids': short ids + a manifest (preview builds); false: off. */
  sourceLocations?: 'paths' | 'ids' | false
  /** Globs (relative to the root) of files to mark; default every file the bundler hands over outside node_modules. */
  include?: string[]
  /** Globs of files never marked (node_modules is never marked, whatever these say). */
  exclude?: string[]
  /**
   * Whose JSX this is. 'solid': Solid keeps no component in the DOM, so each component element of
   * the app's JSX also stamps its call site on the element(s) its component returns
   * (`data-marginalia-call="Name@file:line:column"`; 'paths' mode only: an 'ids' build names no file). Default 'react': components are left alone
   * (React's fibers know their call sites).
   */
  jsx?: 'react' | 'solid'
}

export interface MarkResult {
  code: string
  map: ReturnType<MagicString['generateMap']>
  /** id → file:line:column, for 'ids' mode. */
  ids?: Record<string, string>
}

const JS_FILE = /\.[cm]?[jt]sx$|\.[cm]?[jt]s$/
const SCRIPT_ANY = /\.(?:[cm]?[jt]sx?|vue|svelte|astro)$/

/** Glob → RegExp: `**` any depth, `*` within a segment, `?` one character. */
function globToRegExp(glob: string): RegExp {
  let re = ''
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === '*' && glob[i + 1] === '*') {
      i++
      if (glob[i + 1] === '/') {
        i++
        re += '(?:.*/)?'
      } else re += '.*'
    } else if (c === '*') re += '[^/]*'
    else if (c === '?') re += '[^/]'
    else re += /[.+^${}()|[\]\\]/.test(c) ? `\\${c}` : c
  }
  return new RegExp(`^${re}$`)
}

/** Whether `id` (an absolute module id, maybe with a query) is app source to mark; the path relative to root when so. */
function fileToMark(id: string, root: string, options: MarkOptions): string | undefined {
  if (options.sourceLocations === false) return undefined
  const clean = id.split('?')[0]!
  if (clean.startsWith('\0') || clean.includes('/node_modules/') || clean.includes('\\node_modules\\')) return undefined
  if (!SCRIPT_ANY.test(clean) || !path.isAbsolute(clean)) return undefined
  // A sub-request (?vue&type=style, ?raw, ?url …) carries no markup of its own.
  if (/[?&](?:type|raw|url|worker|inline)(?:[=&]|$)/.test(id)) return undefined
  const rel = path.relative(root, clean).split(path.sep).join('/')
  if (rel.startsWith('../') || path.isAbsolute(rel)) return undefined
  if (options.include && !options.include.some((g) => globToRegExp(g).test(rel))) return undefined
  if (options.exclude?.some((g) => globToRegExp(g).test(rel))) return undefined
  return rel
}

/** 1-based line and column of UTF-16 offsets, computed once per file. */
function locator(code: string): (offset: number) => { line: number; column: number } {
  const starts = [0]
  for (let i = code.indexOf('\n'); i !== -1; i = code.indexOf('\n', i + 1)) starts.push(i + 1)
  return (offset) => {
    let lo = 0
    let hi = starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (starts[mid]! <= offset) lo = mid
      else hi = mid - 1
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1 }
  }
}

/** A short stable id for a location (ids mode): the same file:line:column gives the same id in every build. */
function shortId(location: string, taken: ReadonlySet<string> | Record<string, string>): string {
  const hash = createHash('sha1').update(location).digest('base64url').replace(/[-_]/g, 'x')
  const has = (k: string) => (taken instanceof Set ? taken.has(k) : Object.hasOwn(taken, k) && (taken as Record<string, string>)[k] !== location)
  for (let n = 4; n <= hash.length; n++) if (!has(hash.slice(0, n))) return hash.slice(0, n)
  return hash
}

class Marker {
  readonly s: MagicString
  readonly at: (offset: number) => { line: number; column: number }
  readonly ids: Record<string, string> = {}
  constructor(
    readonly code: string,
    readonly rel: string,
    readonly mode: 'paths' | 'ids',
  ) {
    this.s = new MagicString(code)
    this.at = locator(code)
  }
  /** Insert the attribute after the tag name ending at `nameEnd`, for the element starting at `start`. */
  mark(start: number, nameEnd: number): void {
    const { line, column } = this.at(start)
    const loc = `${this.rel}:${line}:${column}`
    if (this.mode === 'ids') {
      const id = shortId(loc, this.ids)
      this.ids[id] = loc
      this.s.appendLeft(nameEnd, ` ${ID_ATTR}="${id}"`)
    } else this.s.appendLeft(nameEnd, ` ${SOURCE_ATTR}="${loc.replace(/"/g, '&quot;')}"`)
  }
  result(): MarkResult | undefined {
    if (!this.s.hasChanged()) return undefined
    const out: MarkResult = { code: this.s.toString(), map: this.s.generateMap({ hires: 'boundary', source: this.rel, includeContent: true }) }
    if (this.mode === 'ids') out.ids = this.ids
    return out
  }
}

interface Node {
  type: string
  start: number
  end: number
  [key: string]: unknown
}
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && typeof (v as Node).type === 'string'

const HOST_TAG = /^[a-z][\w.:-]*$/

const CALL_ATTR = 'data-marginalia-call'
/** Solid's own components (control flow, portals): never stamped. */
const SOLID_BUILTINS = new Set(['Show', 'For', 'Index', 'Switch', 'Match', 'Suspense', 'SuspenseList', 'ErrorBoundary', 'Portal', 'Dynamic', 'NoHydration', 'Hydration'])

/** `Name` of a JSX element name (`Name`, `ns.Name`), when it is a component. */
function componentName(name: Node & { name?: unknown; property?: Node & { name?: unknown } }): string | undefined {
  if (name.type === 'JSXIdentifier' && typeof name.name === 'string' && /^[A-Z]/.test(name.name)) return name.name
  if (name.type === 'JSXMemberExpression' && typeof name.property?.name === 'string') return name.property.name
  return undefined
}

/** Mark every JSX host element of a JS/TS(X) file (and, for Solid, stamp each component element's call site). */
function markJsx(m: Marker, filename: string, jsx: 'react' | 'solid' = 'react'): void {
  if (!m.code.includes('<')) return
  const { program, errors } = parseSync(filename, m.code, { lang: /\.[cm]?tsx?$/.test(filename) ? 'tsx' : 'jsx' })
  if (errors.length > 0 && program.body.length === 0) return
  const stack: unknown[] = [program]
  const parents = new Map<unknown, Node>()
  while (stack.length > 0) {
    const node = stack.pop()
    if (Array.isArray(node)) {
      for (const n of node) stack.push(n)
      continue
    }
    if (!isNode(node)) continue
    // Call sites name files: dev only, never in an 'ids' build.
    if (jsx === 'solid' && m.mode === 'paths' && node.type === 'JSXElement') {
      const opening = node.openingElement as Node & { name: Node }
      const name = componentName(opening.name)
      if (name !== undefined && !SOLID_BUILTINS.has(name)) {
        const { line, column } = m.at(node.start)
        const call = JSON.stringify(`${name}@${m.rel}:${line}:${column}`)
        // The element the component returns carries where it is used; a fragment (an array) stamps
        // each element in it, an accessor (what a component returns under solid-refresh, or a list)
        // what it gives when read. Text has no element to carry it.
        const attr = JSON.stringify(CALL_ATTR)
        const wrap = `((n, s) => (s = (v) => typeof v === 'function' ? () => s(v()) : Array.isArray(v) ? v.map(s) : (v instanceof Element && !v.hasAttribute(${attr}) && v.setAttribute(${attr}, ${call}), v))(n))(`
        const inJsx = (t: string | undefined) => t === 'JSXElement' || t === 'JSXFragment'
        const child = inJsx(parents.get(node)?.type)
        m.s.appendLeft(node.start, child ? `{${wrap}` : wrap)
        m.s.appendRight(node.end, child ? ')}' : ')')
      }
    }
    if (node.type === 'JSXOpeningElement') {
      const name = node.name as Node & { name?: string }
      const attrs = node.attributes as (Node & { name?: { name?: string } })[]
      if (name.type === 'JSXIdentifier' && typeof name.name === 'string' && HOST_TAG.test(name.name) && !attrs.some((a) => a.name?.name === SOURCE_ATTR || a.name?.name === ID_ATTR)) m.mark(node.start, name.end)
    }
    for (const key in node) {
      if (key === 'type' || key === 'start' || key === 'end') continue
      const v = node[key]
      if (typeof v === 'object' && v !== null) {
        if (jsx === 'solid') for (const c of Array.isArray(v) ? v : [v]) if (isNode(c)) parents.set(c, node)
        stack.push(v)
      }
    }
  }
}

type Loaded<T> = T | null | undefined
let vueSfc: Loaded<typeof import('@vue/compiler-sfc')>
let svelteCompiler: Loaded<typeof import('svelte/compiler')>
let astroCompiler: Loaded<AstroCompiler>
async function loadAstro(root: string) {
  // The asynchronous entry: Astro compiles with it, so its WebAssembly module is compiled once for
  // both (the synchronous entry compiles a second one, ~300 ms, before the first page).
  if (astroCompiler === undefined) astroCompiler = await importFrom<AstroCompiler>(root, ['@astrojs/compiler', '@astrojs/compiler/sync'])
  return astroCompiler
}
async function loadVue(root: string) {
  if (vueSfc === undefined) vueSfc = await importFrom<typeof import('@vue/compiler-sfc')>(root, ['vue/compiler-sfc', '@vue/compiler-sfc'])
  return vueSfc
}
async function loadSvelte(root: string) {
  if (svelteCompiler === undefined) svelteCompiler = await importFrom<typeof import('svelte/compiler')>(root, ['svelte/compiler'])
  return svelteCompiler
}
async function importFrom<T>(root: string, specifiers: string[]): Promise<T | null> {
  const { createRequire } = await import('node:module')
  // The app's own copy first; else one beside Marginalia (a monorepo, a global install).
  for (const from of [path.join(root, 'package.json'), import.meta.url]) {
    const req = createRequire(from)
    for (const spec of specifiers) {
      try {
        const mod = (await import(pathToUrl(esmEntry(req.resolve(spec), spec)))) as T & { default?: T; parse?: unknown }
        return typeof mod.parse === 'function' ? mod : (mod.default ?? mod)
      } catch {
        // try the next one
      }
    }
  }
  return null
}

/** The first target of an `exports` entry under the conditions Node imports with. */
function importTarget(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return undefined
  for (const [condition, target] of Object.entries(entry)) {
    const found = condition === 'node' || condition === 'import' || condition === 'default' ? importTarget(target) : undefined
    if (found) return found
  }
  return undefined
}

/**
 * The file `import(spec)` loads, given the file `require.resolve(spec)` found. The framework's
 * own plugin imports its compiler, so importing the same file shares that copy (Svelte's compiler
 * is a second bundle for `require`, ~100 ms to load). Only the package's `exports` for `spec` are
 * read; the required file stands when they name nothing else.
 */
function esmEntry(required: string, spec: string): string {
  const name = spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/')
  try {
    for (let dir = path.dirname(required); dir !== path.dirname(dir); dir = path.dirname(dir)) {
      const file = path.join(dir, 'package.json')
      if (!existsSync(file)) continue
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; exports?: unknown }
      if (pkg.name !== name) continue
      const sub = `.${spec.slice(name.length)}`
      const exports = pkg.exports as Record<string, unknown> | string | undefined
      const entry = typeof exports === 'object' && exports !== null && Object.keys(exports).some((k) => k.startsWith('.')) ? exports[sub] : sub === '.' ? exports : undefined
      const target = importTarget(entry)
      return target ? path.join(dir, target) : required
    }
  } catch {
    // an unreadable package.json: the required file
  }
  return required
}
const pathToUrl = (p: string) => (path.isAbsolute(p) ? new URL(`file://${p.startsWith('/') ? '' : '/'}${p.split(path.sep).join('/')}`).href : p)

interface VueNode {
  type: number
  tag?: string
  tagType?: number
  loc: { start: { offset: number } }
  props?: { name: string; type: number }[]
  children?: VueNode[]
  branches?: VueNode[]
}

/** Vue's own components: never given a call site. */
const VUE_BUILTINS = new Set(['transition', 'transitiongroup', 'keepalive', 'teleport', 'suspense', 'component'])

/**
 * Mark every element of a Vue SFC's `<template>` (plain elements only: never a component, slot or
 * <template>). Each component tag gets a vnode hook that records where it is used on its instance
 * (`__marginaliaCall = "Name@file:line:column"`): nothing reaches the DOM or the component's props,
 * so no attribute falls through and Vue warns of nothing.
 */
async function markVue(m: Marker, root: string): Promise<void> {
  const sfc = await loadVue(root)
  if (!sfc) return
  const { descriptor } = sfc.parse(m.code, { filename: m.rel, sourceMap: false })
  const ast = descriptor.template?.ast as VueNode | undefined
  if (!ast || descriptor.template?.lang) return
  const walk = (n: VueNode): void => {
    // NodeTypes.ELEMENT = 1, ElementTypes.ELEMENT = 0; the root is the <template> block itself.
    if (n.type === 1 && n.tagType === 0 && n !== ast && n.tag && !n.props?.some((p) => p.name === SOURCE_ATTR)) {
      const start = n.loc.start.offset
      m.mark(start, start + 1 + n.tag.length)
    }
    // ElementTypes.COMPONENT = 1.
    if (n.type === 1 && n.tagType === 1 && n.tag && !VUE_BUILTINS.has(n.tag.replace(/-/g, '').toLowerCase()) && m.mode === 'paths') {
      const start = n.loc.start.offset
      const { line, column } = m.at(start)
      const name = n.tag.replace(/(?:^|-)([a-z])/g, (_, c: string) => c.toUpperCase())
      const call = `${name}@${m.rel}:${line}:${column}`.replace(/[\\']/g, '').replace(/"/g, '&quot;')
      m.s.appendLeft(start + 1 + n.tag.length, ` @vue:mounted="(v) => { if (v.component) v.component.__marginaliaCall = '${call}' }"`)
    }
    for (const c of n.children ?? []) walk(c)
    for (const b of n.branches ?? []) walk(b)
  }
  walk(ast)
}

interface SvelteNode {
  type: string
  name?: string
  start: number
  [key: string]: unknown
}

/** Mark every regular element of a Svelte 5 component's markup. */
async function markSvelte(m: Marker, root: string): Promise<void> {
  const compiler = await loadSvelte(root)
  if (!compiler) return
  const ast = compiler.parse(m.code, { modern: true }) as unknown as { fragment: SvelteNode }
  const stack: unknown[] = [ast.fragment]
  while (stack.length > 0) {
    const node = stack.pop()
    if (Array.isArray(node)) {
      for (const n of node) stack.push(n)
      continue
    }
    if (typeof node !== 'object' || node === null) continue
    const n = node as SvelteNode
    if (n.type === 'RegularElement' && typeof n.name === 'string') m.mark(n.start, n.start + 1 + n.name.length)
    for (const key in n) {
      if (key === 'type' || key === 'start' || key === 'end' || key === 'metadata' || key === 'parent') continue
      const v = n[key]
      if (typeof v === 'object' && v !== null) stack.push(v)
    }
  }
}

interface AstroNode {
  type: string
  name?: string
  value?: string
  position?: { start: { line: number; column: number } }
  children?: AstroNode[]
}
interface AstroCompiler {
  parse(code: string, options: { position: boolean }): { ast: AstroNode } | Promise<{ ast: AstroNode }>
}
/** Elements of an .astro template that are never marked: raw text, slots, the document's frame. */
const ASTRO_UNMARKED = new Set(['script', 'style', 'slot', 'html', 'head', 'body', 'template'])
/** Elements of an .astro template that never carry a call site: Astro processes a script or style by its attributes. */
const ASTRO_NO_CALL = new Set(['script', 'style', 'slot', 'template'])

/**
 * An .astro component's call site (dev only): each `<Name>` tag of a component imported from an
 * .astro file passes it as a prop, `data-marginalia-astro-call="Name@file:line:column"`, and each
 * element at the top of every .astro template writes `<its own file>|<that prop>` into the
 * attribute of the same name (nothing when the prop is absent: a page, a component used elsewhere).
 */
const ASTRO_CALL_ATTR = 'data-marginalia-astro-call'

/** Local names the frontmatter imports by default from .astro files: the components given call sites. */
function astroImports(frontmatter: string): Set<string> {
  const names = new Set<string>()
  if (!frontmatter.includes('.astro')) return names
  const { program } = parseSync('frontmatter.ts', frontmatter, { lang: 'ts' })
  for (const s of program.body as unknown as Node[]) {
    const source = (s.source as { value?: unknown } | undefined)?.value
    if (s.type !== 'ImportDeclaration' || typeof source !== 'string' || !source.split('?')[0]!.endsWith('.astro')) continue
    for (const sp of s.specifiers as (Node & { local: { name: string } })[]) if (sp.type === 'ImportDefaultSpecifier') names.add(sp.local.name)
  }
  return names
}

/**
 * Mark every HTML element of an Astro component's template (never a component, nor
 * script/style/slot); in 'paths' mode also stamp call sites ({@link ASTRO_CALL_ATTR}).
 */
async function markAstro(m: Marker, root: string): Promise<void> {
  const compiler = await loadAstro(root)
  if (!compiler) return
  const { ast } = await compiler.parse(m.code, { position: true })
  // Lines and columns (characters) from the compiler; its offsets count bytes.
  const starts = [0]
  for (let i = m.code.indexOf('\n'); i !== -1; i = m.code.indexOf('\n', i + 1)) starts.push(i + 1)
  /** Where the tag of `n` starts and its name ends in the source, when the compiler's position checks out. */
  const offsetOf = (p: { line: number; column: number }): number => (starts[p.line - 1] ?? Number.NaN) + p.column - 1
  const tagOf = (n: AstroNode): { start: number; nameEnd: number } | undefined => {
    // The compiler gives no position to an <html> that has a <head>: its tag ends where its first child starts.
    const first = n.name === 'html' && !n.position ? n.children?.find((c) => c.position)?.position : undefined
    if (!n.name || !(n.position || first)) return undefined
    const start = n.position ? offsetOf(n.position.start) : m.code.lastIndexOf('<html', offsetOf(first!.start))
    const nameEnd = start + 1 + n.name.length
    return m.code[start] === '<' && m.code.slice(start + 1, nameEnd) === n.name && /[\s/>]/.test(m.code[nameEnd] ?? '') ? { start, nameEnd } : undefined
  }
  const calls = m.mode === 'paths'
  const imported = calls ? astroImports(ast.children?.find((c) => c.type === 'frontmatter')?.value ?? '') : new Set<string>()
  const stack: AstroNode[] = [ast]
  while (stack.length > 0) {
    const n = stack.pop()!
    if (n.type === 'element' && n.name && HOST_TAG.test(n.name) && !ASTRO_UNMARKED.has(n.name)) {
      const tag = tagOf(n)
      if (tag) m.mark(tag.start, tag.nameEnd)
    }
    if (n.type === 'component' && n.name && imported.has(n.name)) {
      const tag = tagOf(n)
      if (tag) {
        const { line, column } = m.at(tag.start)
        m.s.appendLeft(tag.nameEnd, ` ${ASTRO_CALL_ATTR}={${JSON.stringify(`${n.name}@${m.rel}:${line}:${column}`)}}`)
      }
    }
    if (n.type === 'element' && (n.name === 'script' || n.name === 'style')) continue
    for (const c of n.children ?? []) stack.push(c)
  }
  if (!calls) return
  // The elements at the top of the template (through fragments and expressions, not into elements or components).
  const prop = `Astro.props[${JSON.stringify(ASTRO_CALL_ATTR)}]`
  const value = `{${prop} && ${JSON.stringify(`${m.rel}|`)} + ${prop}}`
  const top: AstroNode[] = [...(ast.children ?? [])]
  while (top.length > 0) {
    const n = top.shift()!
    if (n.type === 'fragment' || n.type === 'expression') top.unshift(...(n.children ?? []))
    else if ((n.type === 'element' || n.type === 'custom-element') && n.name && !ASTRO_NO_CALL.has(n.name)) {
      const tag = tagOf(n)
      if (tag) m.s.appendLeft(tag.nameEnd, ` ${ASTRO_CALL_ATTR}=${value}`)
    }
  }
}

/** Mark one module's code; undefined when nothing changed (or the file is not app source). */
export async function markModule(code: string, id: string, root: string, options: MarkOptions = {}): Promise<MarkResult | undefined> {
  const rel = fileToMark(id, root, options)
  if (rel === undefined) return undefined
  const mode = options.sourceLocations === 'ids' ? 'ids' : 'paths'
  const file = id.split('?')[0]!
  const m = new Marker(code, rel, mode)
  if (file.endsWith('.vue')) await markVue(m, root)
  else if (file.endsWith('.svelte')) await markSvelte(m, root)
  else if (file.endsWith('.astro')) await markAstro(m, root)
  else if (JS_FILE.test(file)) markJsx(m, file, options.jsx)
  return m.result()
}
