/** init/doctor recognise React Router 7 (framework mode), Solid and Preact before plain Vite, each with its dev origin. */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { detectFramework, readProject } from '../../../src/cli/frameworks/index.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { testDir } from '../../helpers/store.js'

const cleanups = useCleanups()

function project(deps: Record<string, string>, files: string[] = ['vite.config.ts']): string {
  const { dir } = testDir(cleanups, 'marginalia-fw-')
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, devDependencies: deps }))
  for (const f of files) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true })
    writeFileSync(path.join(dir, f), 'export default {}\n')
  }
  return dir
}

describe('frameworks on Vite', () => {
  it('detects each by its package, before plain Vite, with its dev origin and script', () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ '@react-router/dev': '7.16.0', vite: '^8.0.3' }, 'react-router', 'http://localhost:5173'],
      [{ 'vite-plugin-solid': '^2.11.14', 'solid-js': '^1.9.17', vite: '^8.3.4' }, 'solid', 'http://localhost:5173'],
      [{ '@preact/preset-vite': '^2.10.6', preact: '^10.29.8', vite: '^8.3.4' }, 'preact', 'http://localhost:5173'],
      [{ vite: '^8.3.4' }, 'vite', 'http://localhost:5173'],
    ]
    for (const [deps, id, origin] of cases) {
      const f = detectFramework(readProject(project(deps)))
      expect([f.id, f.devOrigin, f.devScript, f.startsServer]).toEqual([id, origin, 'dev', true])
      expect(f.unsupported?.(readProject(project(deps)))).toBeUndefined()
    }
    // SolidStart is not plain Solid on Vite.
    expect(detectFramework(readProject(project({ 'vite-plugin-solid': '^2.11.14', '@solidjs/start': '^1.1.0', vite: '^6.0.0' }))).id).not.toBe('solid')
  })

  it('refuses what it cannot set up, saying what works instead', () => {
    const rr = readProject(project({ '@react-router/dev': '^6.0.0', vite: '^5.0.0' }))
    expect(detectFramework(rr).unsupported?.(rr)).toMatch(/older than React Router 7.*<script> tag with `marginalia serve`/)
    const oldVite = readProject(project({ '@preact/preset-vite': '^2.5.0', vite: '^4.5.0' }))
    expect(detectFramework(oldVite).unsupported?.(oldVite)).toMatch(/Vite \^4\.5\.0 is older than Vite 5/)
  })
})
