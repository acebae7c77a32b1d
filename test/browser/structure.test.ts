/**
 * The browser code stays a tree of collaborators: no module imports itself back through others
 * (a trial split of the old one-class overlay produced a six-file cycle). Type-only imports count
 * too: a cycle of types is the same tangle, only erased at run time.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const browser = path.resolve(import.meta.dirname, '../../src/browser')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []))
}

/** Each browser module and the browser modules it imports (relative `.js` specifiers name `.ts` files). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sources(browser)) {
    const specifiers = [...readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+'(\.[^']+)'/gm)].map((m) => m[1]!)
    const targets = specifiers.map((s) => path.resolve(path.dirname(file), s.replace(/\.js$/, '.ts'))).filter((t) => t.startsWith(browser + path.sep))
    graph.set(path.relative(browser, file), targets.map((t) => path.relative(browser, t)))
  }
  return graph
}

/** Every cycle found by a depth-first walk, as the list of modules around it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (node: string) => {
    state.set(node, 'open')
    stack.push(node)
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(node, 'done')
  }
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node)
  return found
}

describe('browser code structure', () => {
  it('has no import cycles', () => {
    const graph = importGraph()
    expect(graph.size).toBeGreaterThan(20)
    expect(graph.get('overlay/overlay.ts')).toContain('overlay/sync/page-sync.ts')
    expect(cycles(graph).map((c) => c.join(' → '))).toEqual([])
  })

  it('finds a cycle when there is one (the check itself works)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ])
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']])
  })
})
