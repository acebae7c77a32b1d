#!/usr/bin/env node
/**
 * Installs the framework fixture apps (test/fixtures/frameworks/<name>/, each an app made by its
 * framework's starter, pinned by its own package-lock.json) so the framework tests can run them:
 * `npm ci` in each whose lockfile changed since its last install (a stamp in its node_modules),
 * then this package linked in as node_modules/marginalia (built dist/, as an app would import it)
 * with its command in node_modules/.bin.
 * Progress on stderr; exit code 1 when an install fails. `node scripts/fixtures.mjs [name ...]`.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')
const dir = path.join(root, 'test', 'fixtures', 'frameworks')
const only = process.argv.slice(2)
const apps = existsSync(dir)
  ? readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(path.join(dir, e.name, 'package-lock.json')))
      .map((e) => e.name)
      .filter((name) => only.length === 0 || only.includes(name))
      .sort()
  : []

for (const name of apps) {
  const app = path.join(dir, name)
  const lock = readFileSync(path.join(app, 'package-lock.json'))
  const stamp = path.join(app, 'node_modules', '.marginalia-fixture-stamp')
  const hash = createHash('sha256').update(lock).digest('hex')
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== hash) {
    const started = Date.now()
    process.stderr.write(`fixtures: installing ${name} (npm ci)…\n`)
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: app, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NUXT_TELEMETRY_DISABLED: '1', ASTRO_TELEMETRY_DISABLED: '1', NG_CLI_ANALYTICS: 'false' } })
    writeFileSync(stamp, hash)
    process.stderr.write(`fixtures: ${name} installed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
  }
  const link = path.join(app, 'node_modules', 'marginalia')
  let linked = false
  try {
    linked = lstatSync(link).isSymbolicLink()
  } catch {
    linked = false
  }
  if (!linked) {
    rmSync(link, { recursive: true, force: true })
    mkdirSync(path.dirname(link), { recursive: true })
    symlinkSync(path.relative(path.dirname(link), root), link, 'dir')
  }
  // Its command too, as an install links it: the MCP configs init writes run `npx --no-install marginalia`.
  const bin = path.join(app, 'node_modules', '.bin', 'marginalia')
  if (!existsSync(bin)) {
    rmSync(bin, { force: true })
    mkdirSync(path.dirname(bin), { recursive: true })
    symlinkSync(path.join('..', 'marginalia', 'dist', 'marginalia.mjs'), bin)
  }
}
if (apps.length > 0) process.stderr.write(`fixtures: ${apps.length} app(s) ready: ${apps.join(', ')}\n`)
