/**
 * Configs people can commit, driven with the built CLI as a person runs it: `init` edits a
 * commented `.vscode/mcp.json` (as `ng new` writes one) in place, keeping its comments and the
 * other servers; the project files it writes hold no absolute path, so a copy of the project at
 * another path passes `doctor`; init names what each agent asks and the Annotate button; and
 * `doctor` reads the port the app really uses from `marginalia({ port })` in vite.config.
 */
import { describe, expect, it } from 'vitest'
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { derivedPort } from '../../../src/http/project-port.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { CLI, runCli, startServeCli } from '../../helpers/cli.js'
import { testDir } from '../../helpers/store.js'

const cleanups = useCleanups()

const NG_MCP = `{
  // For more information, visit: https://angular.dev/ai/mcp
  "servers": {
    "angular-cli": {
      "command": "npx",
      "args": ["-y", "@angular/cli", "mcp"], // the Angular CLI's own server
    },
  },
}
`

/** A Vite app as `npm create vite` leaves it, with VS Code's commented MCP config beside it. */
function viteApp(name: string, plugin = ''): { dir: string; home: string } {
  const { dir: parent } = testDir(cleanups, 'marginalia-configs-')
  const dir = path.join(parent, name)
  mkdirSync(path.join(dir, '.vscode'), { recursive: true })
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module', scripts: { dev: 'vite' }, devDependencies: { vite: '^8.0.0' } }, null, 2))
  writeFileSync(path.join(dir, 'vite.config.ts'), `import { defineConfig } from 'vite'\n${plugin ? "import marginalia from 'marginalia/vite'\n" : ''}\nexport default defineConfig({\n  plugins: [${plugin}],\n})\n`)
  writeFileSync(path.join(dir, '.vscode', 'mcp.json'), NG_MCP)
  const home = path.join(parent, 'home')
  mkdirSync(home)
  return { dir, home }
}

const env = (home: string) => ({ HOME: home, MARGINALIA_PORT: '', MARGINALIA_STORE: '', DATABASE_URL: '' })

interface DoctorJson {
  ok: boolean
  checks: { name: string; status: string; detail: string; fix?: string }[]
}

describe('configs people can commit', () => {
  it('init edits a commented .vscode/mcp.json in place, writes no absolute path, says what each agent asks; a copy elsewhere passes doctor', { timeout: 90_000 }, async () => {
    const { dir, home } = viteApp('shop')
    const first = await runCli(['init', '--yes', '--agent', 'claude', '--agent', 'cursor', '--agent', 'vscode', '--agent', 'gemini'], dir, env(home), 60_000)
    expect(first.code, first.stderr).toBe(0)
    const vscode = readFileSync(path.join(dir, '.vscode', 'mcp.json'), 'utf8')
    // Comments, trailing commas and the Angular server stay; marginalia is added beside it.
    expect(vscode).toContain('// For more information, visit: https://angular.dev/ai/mcp')
    expect(vscode).toContain('// the Angular CLI\'s own server')
    expect(vscode).toContain('"angular-cli"')
    expect(vscode).toContain('"marginalia": {')
    expect(vscode).toContain('"${workspaceFolder}"')
    expect(first.stdout).not.toMatch(/not plain JSON|cannot be read/)
    for (const file of ['.mcp.json', '.cursor/mcp.json', '.vscode/mcp.json', '.gemini/settings.json']) expect(readFileSync(path.join(dir, file), 'utf8'), file).not.toContain(dir)
    // What each agent will ask, with the names on its screen, and the overlay's button.
    expect(first.stdout).toContain('"Pending approval (run `claude` to approve)"')
    expect(first.stdout).toContain('"Trust folder"')
    expect(first.stdout).toContain('click Annotate')
    expect(first.stdout).not.toContain('Marginalia button')
    // Again: nothing to change (the commented file is read, not refused).
    const again = await runCli(['init', '--yes', '--agent', 'claude', '--agent', 'cursor', '--agent', 'vscode', '--agent', 'gemini'], dir, env(home), 60_000)
    expect(again.stdout).toContain('nothing to change')

    // A teammate's clone, at another path (without the git-ignored .marginalia/), installed (the hooks run its node_modules/.bin/marginalia), its server on its own port.
    const { dir: elsewhere } = testDir(cleanups, 'marginalia-clone-')
    const clone = path.join(elsewhere, 'shop')
    cpSync(dir, clone, { recursive: true, filter: (src) => path.basename(src) !== '.marginalia' })
    mkdirSync(path.join(clone, 'node_modules', '.bin'), { recursive: true })
    symlinkSync(CLI, path.join(clone, 'node_modules', '.bin', 'marginalia'))
    await startServeCli(cleanups, clone, ['--port', String(derivedPort(clone))], env(home))
    const doctor = await runCli(['doctor', '--json'], clone, env(home))
    const report = JSON.parse(doctor.stdout) as DoctorJson
    expect(report.checks.filter((c) => c.status === 'fail'), doctor.stdout).toEqual([])
    expect(report.checks.find((c) => c.name === 'agent config')).toMatchObject({ status: 'ok' })
    expect(report.checks.find((c) => c.name === 'server')?.detail).toContain(`port ${derivedPort(clone)}`)
    expect(doctor.code).toBe(0)
  })

  it('doctor reads marginalia({ port }) from vite.config, and its fix starts the dev server from where the person stands', { timeout: 60_000 }, async () => {
    const { dir, home } = viteApp('blog', 'marginalia({ port: 5991 })')
    mkdirSync(path.join(dir, 'src'))
    const doctor = await runCli(['doctor', '--json'], path.join(dir, 'src'), env(home))
    const server = (JSON.parse(doctor.stdout) as DoctorJson).checks.find((c) => c.name === 'server')!
    expect(server.status).toBe('fail')
    expect(server.detail).toBe('nothing answers on port 5991 (vite.config.ts)')
    expect(server.fix).toBe('start your dev server: `cd .. && npm run dev` (it starts the Marginalia server on this port)')
    // With that port's server up, the check passes.
    await startServeCli(cleanups, dir, ['--port', '5991'], env(home))
    const ok = JSON.parse((await runCli(['doctor', '--json'], dir, env(home))).stdout) as DoctorJson
    expect(ok.checks.find((c) => c.name === 'server')).toMatchObject({ status: 'ok' })
  })
})
