/**
 * The layer map, enforced: every import in `src` (type-only ones and `import()` too) is an arrow
 * from one room to another, and docs/ARCHITECTURE.md's "Who may import whom" list says which
 * arrows may exist. A cycle between files fails as well.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../../..')
const SRC = path.join(ROOT, 'src')

interface Room {
  name: string
  paths: string[]
  mayImport: Set<string>
  any: boolean
}

/** The rooms as the fenced list under "### Who may import whom" states them. */
export function readRooms(markdown: string): Room[] {
  const section = markdown.split(/^### Who may import whom$/m)[1]
  if (section === undefined) throw new Error('docs/ARCHITECTURE.md has no "### Who may import whom" section')
  const block = /```text\n([\s\S]*?)```/.exec(section)?.[1]
  if (block === undefined) throw new Error('"Who may import whom" has no ```text list')
  return block
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const m = /^([\w-]+):\s+(.+?)\s*->\s*(.*)$/.exec(line)
      if (!m) throw new Error(`cannot read the rooms line: ${line}`)
      const targets = m[3]!.split(/\s+/).filter(Boolean)
      return { name: m[1]!, paths: m[2]!.split(/\s+/), mayImport: new Set(targets.filter((t) => t !== '*')), any: targets.includes('*') }
    })
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const p = path.join(dir, entry)
    if (statSync(p).isDirectory()) return sourceFiles(p)
    return /\.ts$/.test(entry) && !entry.endsWith('.d.ts') ? [p] : []
  })
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

/** The files of `src` each file imports (relative specifiers resolved to files). */
export function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const targets = new Set<string>()
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = m[1] ?? m[2]!
      if (!spec.startsWith('.')) continue
      const base = path.resolve(path.dirname(file), spec)
      const target = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), path.join(base, 'index.ts')].find((t) => existsSync(t) && statSync(t).isFile())
      if (target && target.startsWith(SRC)) targets.add(target)
    }
    graph.set(file, [...targets])
  }
  return graph
}

function roomOf(rooms: readonly Room[], file: string): Room | undefined {
  const rel = path.relative(ROOT, file).split(path.sep).join('/')
  let best: { room: Room; length: number } | undefined
  for (const room of rooms) {
    for (const p of room.paths) {
      if ((rel === p || rel.startsWith(`${p}/`)) && p.length > (best?.length ?? -1)) best = { room, length: p.length }
    }
  }
  return best?.room
}

/** Every cycle's files (strongly connected components of more than one file, or a file importing itself). */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (v: string): void => {
    index.set(v, next)
    low.set(v, next)
    next++
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort())
    }
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v)
  return found
}

const rel = (f: string) => path.relative(ROOT, f)
const rooms = readRooms(readFileSync(path.join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8'))
const graph = importGraph(sourceFiles(SRC))

describe('the layer map', () => {
  it('places every file of src in a room of ARCHITECTURE.md', () => {
    expect([...graph.keys()].filter((f) => roomOf(rooms, f) === undefined).map(rel)).toEqual([])
  })

  it('names only rooms that exist', () => {
    const names = new Set(rooms.map((r) => r.name))
    expect(rooms.flatMap((r) => [...r.mayImport].filter((t) => !names.has(t)).map((t) => `${r.name} -> ${t}`))).toEqual([])
  })

  it('has no import that ARCHITECTURE.md does not allow', () => {
    const refused: string[] = []
    for (const [file, targets] of graph) {
      const from = roomOf(rooms, file)!
      for (const target of targets) {
        const to = roomOf(rooms, target)!
        if (to === from || from.any || from.mayImport.has(to.name)) continue
        refused.push(`${rel(file)} (${from.name}) imports ${rel(target)} (${to.name})`)
      }
    }
    expect(refused).toEqual([])
  })

  it('has no import cycle between files (type-only imports count)', () => {
    expect(cycles(graph).map((c) => c.map(rel).join(' → '))).toEqual([])
  })

  it('catches a cycle and a refused arrow (the checks can fail)', () => {
    const a = path.join(SRC, 'store/a.ts')
    const b = path.join(SRC, 'store/b.ts')
    expect(cycles(new Map([[a, [b]], [b, [a]]]))).toEqual([[a, b]])
    const [store, http] = readRooms('### Who may import whom\n```text\nstore: src/store ->\nhttp: src/http -> store\n```\n')
    expect(store!.mayImport.has('http')).toBe(false)
    expect(http!.mayImport.has('store')).toBe(true)
  })
})
