/**
 * Set-ups without a build plugin get the head snippet: `init` prints it for a server-rendered or
 * plain-HTML project (with the port `marginalia serve` will use), and puts it first in <head>
 * when it writes a page (Angular's development index.html), once.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { withHeadSnippet } from '../../src/cli/frameworks/head-snippet.js'
import { runCli } from '../helpers/cli.js'
import { testDir } from '../helpers/store.js'
import { useCleanups } from '../helpers/cleanup.js'

const cleanups = useCleanups()

describe('init: the head snippet', () => {
  it('a Django-style project (no package.json): init prints the snippet for the layout, in development only, on $MARGINALIA_PORT', async () => {
    const { dir } = testDir(cleanups, 'marginalia-django-')
    writeFileSync(path.join(dir, 'manage.py'), '#!/usr/bin/env python\n')
    const r = await runCli(['init', '--yes', '--dry-run', '--dir', dir], dir, { MARGINALIA_PORT: '4999' })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('framework: another set-up (other)')
    expect(r.stdout).toContain("note: no build plugin for this set-up: run `npx --no-install marginalia serve` beside your dev server, and paste this first in your layout's <head>, in development only")
    expect(r.stdout).toContain("Django: `{% if debug %}`")
    expect(r.stdout).toContain('<script src="http://127.0.0.1:4999/loader.js"></script>\n<script>window[Symbol.for(\'marginalia.loader\')]||')
    expect(r.stdout).toContain('start it with `npx --no-install marginalia serve --port 4999`')
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
