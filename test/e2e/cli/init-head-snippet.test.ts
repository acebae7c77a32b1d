/**
 * Set-ups without a build plugin get the head snippet: `init` prints it for a server-rendered
 * (Rails, Django, Laravel: in the template's development-only condition) or plain-HTML project,
 * with the port `marginalia serve` will use, and puts it first in <head> when it writes a page
 * (Angular's development index.html), once. `doctor` checks from the framework's dev server.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { withHeadSnippet } from '../../../src/cli/frameworks/head-snippet.js'
import { runCli } from '../../helpers/cli.js'
import { testDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

describe('init: the head snippet', () => {
  it('a Django project: init prints the snippet inside {% if debug %}, on $MARGINALIA_PORT; doctor checks from runserver\'s port', async () => {
    const { dir } = testDir(cleanups, 'marginalia-django-')
    writeFileSync(path.join(dir, 'manage.py'), '#!/usr/bin/env python\n')
    const r = await runCli(['init', '--yes', '--dry-run', '--dir', dir], dir, { MARGINALIA_PORT: '4999' })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('framework: Django (django)')
    expect(r.stdout).toContain(
      `note: run \`npx --no-install marginalia serve\` beside \`python manage.py runserver\`, and paste this first in the <head> of your base template (e.g. templates/base.html; \`debug\` needs DEBUG = True and your address in INTERNAL_IPS) (development only; see docs/guide/frameworks.md):\n{% if debug %}\n<script src="http://127.0.0.1:4999/loader.js"></script>\n<script>window[Symbol.for('marginalia.loader')]||`,
    )
    expect(r.stdout).toContain('start it with `npx --no-install marginalia serve --port 4999`')
    expect(r.stdout).toContain('</script>\n{% endif %}\n')
    expect(r.stdout).toContain('beside your dev server (python manage.py runserver)')
    mkdirSync(path.join(dir, '.marginalia')) // doctor finds the project by it
    const doctor = await runCli(['doctor', '--json'], dir, { MARGINALIA_PORT: '1' })
    const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; detail: string }[] }).checks
    expect(checks.find((c) => c.name === 'framework')?.detail).toBe('Django (dev server http://localhost:8000)')
  })

  it('Rails and Laravel get their layout and condition; a plain HTML folder gets the bare snippet', async () => {
    const rails = testDir(cleanups, 'marginalia-rails-').dir
    mkdirSync(path.join(rails, 'bin'))
    writeFileSync(path.join(rails, 'bin', 'rails'), '#!/usr/bin/env ruby\n')
    writeFileSync(path.join(rails, 'Gemfile'), 'gem "rails", "~> 8.0"\n')
    const r = await runCli(['init', '--yes', '--dry-run', '--dir', rails], rails)
    expect(r.stdout).toContain('framework: Ruby on Rails (rails)')
    expect(r.stdout).toContain('app/views/layouts/application.html.erb')
    expect(r.stdout).toContain('<% if Rails.env.development? %>\n<script src="http://127.0.0.1:4848/loader.js"></script>')

    const laravel = testDir(cleanups, 'marginalia-laravel-').dir
    writeFileSync(path.join(laravel, 'artisan'), '#!/usr/bin/env php\n')
    writeFileSync(path.join(laravel, 'composer.json'), '{}\n')
    writeFileSync(path.join(laravel, 'vite.config.js'), 'export default {}\n') // laravel-vite-plugin builds assets; Vite never serves the pages
    const l = await runCli(['init', '--yes', '--dry-run', '--dir', laravel], laravel)
    expect(l.stdout).toContain('framework: Laravel (laravel)')
    expect(l.stdout).toContain("@env('local')\n<script src=")

    const plain = testDir(cleanups, 'marginalia-plain-').dir
    writeFileSync(path.join(plain, 'index.html'), '<!doctype html><title>x</title>\n')
    const p = await runCli(['init', '--yes', '--dry-run', '--dir', plain], plain)
    expect(p.stdout).toContain('framework: another set-up (other)')
    expect(p.stdout).toContain("note: no build plugin for this set-up: run `npx --no-install marginalia serve` beside your dev server, and paste this first in your layout's <head>, in development only")
    expect(p.stdout).toContain('<script src="http://127.0.0.1:4848/loader.js"></script>')
  })

  it('goes first in <head>, indented as the page is, and only once', () => {
    const page = '<!doctype html>\n<html>\n<head>\n    <meta charset="utf-8">\n</head>\n<body></body>\n</html>\n'
    const once = withHeadSnippet(page)!
    const lines = once.split('\n')
    expect(lines[3]).toBe('    <!-- Marginalia (development only): the page log from the first line, and the overlay -->')
    expect(lines[4]).toMatch(/^ {4}<script src="http:\/\/127\.0\.0\.1:\d+\/loader\.js"><\/script>$/)
    expect(lines[5]).toMatch(/^ {4}<script>window\[Symbol\.for\('marginalia\.loader'\)\]/)
    expect(lines[6]).toBe('    <meta charset="utf-8">')
    expect(withHeadSnippet(once)).toBe(once)
    expect(withHeadSnippet('<p>no head</p>')).toBeUndefined()
  })
})
