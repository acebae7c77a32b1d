/**
 * Vite < 5: the plugin, `init` and `doctor` each say so clearly — the version found, the minimum
 * (Vite 5) and what works instead (the script tag with `marginalia serve`) — instead of a dev
 * server whose every page answers 500 "hook is not a function".
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import marginalia from '../../src/integrations/vite/index.js'
import { runningViteVersion, viteTooOld } from '../../src/integrations/vite/version.js'
import { runCli } from '../helpers/cli.js'
import { useCleanups } from '../helpers/cleanup.js'
import { testDir } from '../helpers/store.js'

const cleanups = useCleanups()

/** A project on Vite `range` whose node_modules holds Vite `installed`. */
function project(range: string, installed: string): string {
  const { dir } = testDir(cleanups, 'marginalia-old-vite-')
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'old', private: true, devDependencies: { vite: range } }))
  writeFileSync(path.join(dir, 'vite.config.js'), "import { defineConfig } from 'vite'\nexport default defineConfig({ plugins: [] })\n")
  mkdirSync(path.join(dir, 'node_modules', 'vite'), { recursive: true })
  writeFileSync(path.join(dir, 'node_modules', 'vite', 'package.json'), JSON.stringify({ name: 'vite', version: installed, main: 'index.js' }))
  mkdirSync(path.join(dir, 'home'))
  return dir
}

type ConfigHook = (this: { meta?: { viteVersion?: string } } | undefined, config: { root?: string }, env: { command: 'serve'; mode: string }) => unknown

describe('Vite older than 5', () => {
  it('the plugin throws from its config hook, naming the version, the minimum and the script tag with marginalia serve', () => {
    const dir = project('^4.5.0', '4.5.3')
    const hook = marginalia().config as ConfigHook
    const env = { command: 'serve', mode: 'development' } as const
    // Vite 4 passes no meta: the version is the one the project resolves.
    expect(() => hook.call(undefined, { root: dir }, env)).toThrow(/needs Vite 5 or newer; this project runs Vite 4\.5\.3\..*<script src="http:\/\/127\.0\.0\.1:4848\/overlay\.js" defer><\/script>.*npx marginalia serve/)
    // What Vite says of itself wins.
    expect(() => hook.call({ meta: { viteVersion: '2.9.18' } }, { root: dir }, env)).toThrow(/this project runs Vite 2\.9\.18/)
    expect(hook.call({ meta: { viteVersion: '8.0.3' } }, { root: dir }, env)).toBeUndefined()
    expect(runningViteVersion(undefined, dir)).toBe('4.5.3')
    expect(viteTooOld('5.0.0')).toBeUndefined()
    expect(viteTooOld(undefined)).toBeUndefined()
  })

  it('init refuses and changes nothing; doctor fails its framework check with the same advice', { timeout: 60_000 }, async () => {
    const dir = project('^4.5.0', '4.5.3')
    const init = await runCli(['init', '--yes'], dir, { HOME: path.join(dir, 'home') })
    expect(init.code).not.toBe(0)
    expect(init.stderr).toContain('Vite ^4.5.0 is older than Vite 5, the oldest the plugin supports')
    expect(init.stderr).toContain('<script> tag with `marginalia serve`')
    expect(init.stdout).not.toContain('wrote')

    const doctor = await runCli(['doctor', '--json', '--port', '1'], dir, { HOME: path.join(dir, 'home') })
    const framework = (JSON.parse(doctor.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks.find((c) => c.name === 'framework')
    expect(framework).toMatchObject({ status: 'fail', detail: expect.stringContaining('older than Vite 5') as unknown })
    expect(doctor.code).toBe(1)
  })
})
