/**
 * Just enough source-map reading to turn a generated position in a dev server's module (React
 * 19's `_debugStack`) back into the original file and line: the module's own map (inline, as
 * Vite serves it, or beside it), decoded for the one line asked. Index maps (`sections`, as
 * Turbopack writes them for its chunks) are read section by section. Read synchronously at click
 * time, cached per module. A frame of a Server Component names a file on the server
 * (`file:///…/.next/dev/server/chunks/ssr/….js`), and webpack's eval'd modules a
 * `webpack-internal:///` URL, neither of which a page may load: on a Next.js dev server their maps
 * come from Next's own `/__nextjs_source-map` endpoint; elsewhere such frames are skipped.
 */
interface RawMap {
  sources: string[]
  sourceRoot?: string
  mappings: string
}

interface IndexMap {
  sections: { offset: { line: number; column: number }; map: RawMap | IndexMap }[]
}

/** One plain map placed at a generated (0-based) line and column of the module. */
interface Section {
  line: number
  column: number
  map: RawMap
  lines: string[]
}

const maps = new Map<string, Section[] | null>()

/** A map's plain sections in order, nested index maps flattened. */
function sectionsOf(map: RawMap | IndexMap, line = 0, column = 0): Section[] {
  if ('sections' in map) return map.sections.flatMap((s) => sectionsOf(s.map, line + s.offset.line, s.offset.line === 0 ? column + s.offset.column : s.offset.column))
  return [{ line, column, map, lines: map.mappings.split(';') }]
}
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

function getText(url: string): string | undefined {
  const xhr = new XMLHttpRequest()
  xhr.open('GET', url, false)
  xhr.send()
  return xhr.status >= 200 && xhr.status < 300 ? xhr.responseText : undefined
}

/**
 * The map of a module the page cannot load itself, from the Next.js dev server (its pages carry
 * `self.next`, App Router pages `self.__next_f`): a Server Component's chunk on the server, or a
 * webpack-internal:/// module webpack evaluated in the page (`next dev --webpack`).
 */
function nextDevMap(url: string): string | undefined {
  if (!(url.startsWith('webpack-internal:') || url.includes('/.next/')) || !('next' in self || '__next_f' in self)) return undefined
  const base = (document.querySelector('script[src*="/_next/"]') as HTMLScriptElement | null)?.src.replace(/\/_next\/.*$/, '') ?? location.origin
  // A prerendered component's frame is encoded once more (%255B for %5B).
  const file = url.startsWith('webpack-internal:') ? url : url.replace(/\?.*$/, '').replace(/%25/g, '%')
  return getText(`${base}/__nextjs_source-map?filename=${encodeURIComponent(file)}`)
}

function loadMap(href: string): Section[] | null {
  // A server chunk's frames differ only by a query (`….js?14`): one map for them all.
  const url = /^(?:https?|webpack-internal):/.test(href) ? href : href.replace(/\?.*$/, '')
  const cached = maps.get(url)
  if (cached !== undefined) return cached
  let entry: Section[] | null = null
  try {
    if (!/^https?:/.test(url)) {
      const json = nextDevMap(url)
      entry = json ? sectionsOf(JSON.parse(json) as RawMap | IndexMap) : null
      maps.set(url, entry)
      return entry
    }
    const code = getText(url)
    const ref = code && /\/\/[#@] sourceMappingURL=(\S+)\s*$/.exec(code)?.[1]
    if (ref) {
      const json = ref.startsWith('data:') ? atob(ref.slice(ref.indexOf(',') + 1)) : getText(new URL(ref, url).href)
      if (json) {
        entry = sectionsOf(JSON.parse(json) as RawMap | IndexMap)
      }
    }
  } catch {
    entry = null
  }
  maps.set(url, entry)
  return entry
}

/** Decode one line's segments, keeping running source/line/column state from the lines before. */
function decode(lines: string[], upTo: number): number[][] {
  let src = 0
  let srcLine = 0
  let srcCol = 0
  let result: number[][] = []
  for (let l = 0; l <= upTo && l < lines.length; l++) {
    const segs: number[][] = []
    let genCol = 0
    for (const seg of lines[l]!.split(',')) {
      if (!seg) continue
      const v: number[] = []
      let shift = 0
      let value = 0
      for (const ch of seg) {
        const d = B64.indexOf(ch)
        value += (d & 31) << shift
        if (d & 32) shift += 5
        else {
          v.push(value & 1 ? -(value >>> 1) : value >>> 1)
          value = 0
          shift = 0
        }
      }
      genCol += v[0] ?? 0
      if (v.length >= 4) {
        src += v[1]!
        srcLine += v[2]!
        srcCol += v[3]!
        segs.push([genCol, src, srcLine, srcCol])
      }
    }
    result = segs
  }
  return result
}

/** The original file (project-relative when the dev server serves it by path), 1-based line and column. */
export function originalPosition(url: string, line: number, column: number): { file: string; line: number; column: number } | undefined {
  const sections = loadMap(url.replace(/\?.*$/, (q) => q))
  if (!sections) return undefined
  // The last section that starts at or before the position.
  let section: Section | undefined
  for (const s of sections) if (s.line < line - 1 || (s.line === line - 1 && s.column <= column - 1)) section = s
  if (!section) return undefined
  const segs = decode(section.lines, line - 1 - section.line)
  const col = line - 1 === section.line ? column - 1 - section.column : column - 1
  let best: number[] | undefined
  for (const s of segs) if (s[0]! <= col) best = s
  best ??= segs[0]
  if (!best) return undefined
  const source = (section.map.sourceRoot ?? '') + (section.map.sources[best[1]!] ?? '')
  // A dev server serves /src/App.tsx for <root>/src/App.tsx: the URL path is the project-relative file.
  const served = new URL(url).pathname.replace(/^\//, '')
  const base = source.replace(/^.*[\\/]/, '')
  // A bundle's map names sources in the bundler's namespace: webpack:///./src/App.tsx is src/App.tsx.
  const bundled = /^(?:webpack|rspack|turbopack):\/\/[^/]*\/(?:\[project\]\/)?(?:\.\/)?/.exec(source)
  // A server chunk's map names absolute files: the project is the folder that holds .next/.
  const project = url.startsWith('file://') ? /^file:\/\/(.*?)\/\.next\//.exec(url)?.[1] : undefined
  const local = project !== undefined && source.startsWith(`file://${project}/`) ? decodeURIComponent(source.slice(`file://${project}/`.length)) : undefined
  const file = local ?? (bundled ? source.slice(bundled[0].length) : served.endsWith(base) && !served.startsWith('@') ? decodeURIComponent(served) : source)
  return { file, line: best[2]! + 1, column: best[3]! + 1 }
}
