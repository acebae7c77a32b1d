/**
 * Angular: `npm start` (`marginalia dev -- ng serve`, as init wires it) must start the server the
 * page loads the overlay from. The head snippet init writes into the development index.html and the
 * port `marginalia dev` and `doctor` read (configuredPort) are the same port, the project's own (not
 * `marginalia serve`'s 4848, which another project may hold), and the page's "not running" note
 * names the command that starts it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { configuredPort } from '../../../src/cli/configured-port.js'
import { detectFramework, readProject } from '../../../src/cli/frameworks/index.js'
import { DEFAULT_PORT } from '../../../src/http/defaults.js'
import { derivedPort } from '../../../src/http/project-port.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { testDir } from '../../helpers/store.js'

const cleanups = useCleanups()
afterEach(() => vi.unstubAllEnvs())

/** An Angular workspace as `ng new --defaults` leaves it (the files init reads). */
function ngApp(): string {
  const { dir } = testDir(cleanups, 'marginalia-ng-')
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'ng-app', private: true, scripts: { start: 'ng serve' }, dependencies: { '@angular/core': '^21.2.0' }, devDependencies: { '@angular/build': '^21.2.0' } }, null, 2))
  const build = { builder: '@angular/build:application', options: { browser: 'src/main.ts' }, configurations: { production: {}, development: { optimization: false } } }
  writeFileSync(path.join(dir, 'angular.json'), JSON.stringify({ version: 1, projects: { 'ng-app': { projectType: 'application', sourceRoot: 'src', architect: { build } } } }, null, 2))
  mkdirSync(path.join(dir, 'src'))
  writeFileSync(path.join(dir, 'src', 'index.html'), '<!doctype html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n  <title>NgApp</title>\n</head>\n<body>\n  <app-root></app-root>\n</body>\n</html>\n')
  return dir
}

/** Run init's Angular set-up and write what it plans; the notes it printed. */
function setUp(dir: string): string[] {
  const project = readProject(dir)
  const framework = detectFramework(project)
  expect(framework.id).toBe('angular')
  const notes: string[] = []
  framework.setUp(project, { change: (file, after) => writeFileSync(file, after), note: (text) => notes.push(text) })
  return notes
}

const loaderPort = (html: string): number => Number(/http:\/\/127\.0\.0\.1:(\d+)\/loader\.js/.exec(html)?.[1])

describe('init on Angular: the page and `npm start` agree on the server', () => {
  it('writes the port `marginalia dev` serves on into the development page, the project\'s own, and the note names npm start', () => {
    vi.stubEnv('MARGINALIA_PORT', '')
    const dir = ngApp()
    setUp(dir)
    const page = readFileSync(path.join(dir, 'src', 'index.marginalia.html'), 'utf8')
    const served = configuredPort(readProject(dir), detectFramework(readProject(dir)))
    expect(loaderPort(page)).toBe(served.port)
    expect(served.port).toBe(derivedPort(dir))
    expect(served.port).not.toBe(DEFAULT_PORT)
    expect(page).toContain('Marginalia server not running \\u2014 start it with `npm start`')
    expect(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).scripts.start).toBe('marginalia dev -- ng serve')
  })

  it('keeps the port written in the page wherever the project goes (a copy at another path serves where its page loads from)', () => {
    vi.stubEnv('MARGINALIA_PORT', '')
    const dir = ngApp()
    writeFileSync(path.join(dir, 'src', 'index.marginalia.html'), '<head>\n<script src="http://127.0.0.1:4848/loader.js" data-project="ng-app"></script>\n</head>\n')
    const served = configuredPort(readProject(dir), detectFramework(readProject(dir)))
    expect(served).toEqual({ port: 4848, from: 'src/index.marginalia.html' })
  })

  it('uses $MARGINALIA_PORT when it is set as init runs, as `marginalia dev` then does', () => {
    vi.stubEnv('MARGINALIA_PORT', '5999')
    const dir = ngApp()
    setUp(dir)
    expect(loaderPort(readFileSync(path.join(dir, 'src', 'index.marginalia.html'), 'utf8'))).toBe(5999)
  })
})
