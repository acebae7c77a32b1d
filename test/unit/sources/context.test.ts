/** The project root reaches the tools through the registry's context: a registry given it shows the lines around a location; another over the same store does not. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createToolRegistry } from '../../../src/index.js'
import { memoryStore } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

describe('sources in the tool context', () => {
  it('get_annotation reads the snippet from the root its registry was given, and only then', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'marginalia-sources-'))
    cleanups.push(() => rmSync(root, { recursive: true, force: true }))
    writeFileSync(path.join(root, 'App.tsx'), ['export function App() {', '  return <h1>Fruit shop</h1>', '}', ''].join('\n'))
    const store = memoryStore()
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'Bigger', source: { file: 'App.tsx', line: 2, column: 3 } })

    const withRoot = await createToolRegistry(store, { sources: { root } }).call('get_annotation', { id: a.id })
    expect(withRoot.ok && withRoot.result.sourceLines).toBe(['  1 | export function App() {', '> 2 |   return <h1>Fruit shop</h1>', '  3 | }', '  4 | '].join('\n'))
    const without = await createToolRegistry(store).call('get_annotation', { id: a.id })
    expect(without.ok && 'sourceLines' in without.result).toBe(false)
  })
})
