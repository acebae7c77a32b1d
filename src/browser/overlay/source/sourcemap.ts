/**
 * Just enough source-map reading to turn a generated position in a dev server's module (React
 * 19's `_debugStack`) back into the original file and line: the module's own map (inline, as
 * Vite serves it, or beside it), decoded for the one line asked. Read synchronously at click
 * time, cached per module.
 */
interface RawMap {
  sources: string[]
  sourceRoot?: string
  mappings: string
}

const maps = new Map<string, { map: RawMap; lines: string[] } | null>()
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

function getText(url: string): string | undefined {
  const xhr = new XMLHttpRequest()
  xhr.open('GET', url, false)
  xhr.send()
  return xhr.status >= 200 && xhr.status < 300 ? xhr.responseText : undefined
}

function loadMap(url: string): { map: RawMap; lines: string[] } | null {
  const cached = maps.get(url)
  if (cached !== undefined) return cached
  let entry: { map: RawMap; lines: string[] } | null = null
  try {
    const code = getText(url)
    const ref = code && /\/\/[#@] sourceMappingURL=(\S+)\s*$/.exec(code)?.[1]
    if (ref) {
      const json = ref.startsWith('data:') ? atob(ref.slice(ref.indexOf(',') + 1)) : getText(new URL(ref, url).href)
      if (json) {
        const map = JSON.parse(json) as RawMap
        entry = { map, lines: map.mappings.split(';') }
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
  const entry = loadMap(url.replace(/\?.*$/, (q) => q))
  if (!entry) return undefined
  const segs = decode(entry.lines, line - 1)
  let best: number[] | undefined
  for (const s of segs) if (s[0]! <= column - 1) best = s
  best ??= segs[0]
  if (!best) return undefined
  const source = (entry.map.sourceRoot ?? '') + (entry.map.sources[best[1]!] ?? '')
  // A dev server serves /src/App.tsx for <root>/src/App.tsx: the URL path is the project-relative file.
  const served = new URL(url).pathname.replace(/^\//, '')
  const base = source.replace(/^.*[\\/]/, '')
  // A bundle's map names sources in the bundler's namespace: webpack:///./src/App.tsx is src/App.tsx.
  const bundled = /^(?:webpack|rspack|turbopack):\/\/[^/]*\/(?:\.\/)?/.exec(source)
  const file = bundled ? source.slice(bundled[0].length) : served.endsWith(base) && !served.startsWith('@') ? decodeURIComponent(served) : source
  return { file, line: best[2]! + 1, column: best[3]! + 1 }
}
