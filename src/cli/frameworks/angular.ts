/**
 * Angular (the application builder, `@angular/build:application`, and its dev server). Angular's
 * builders take no plugins from angular.json (adding esbuild plugins or middleware needs a custom
 * or third-party builder), so nothing marks elements with their source at build time. What init
 * does instead, dev only: a copy of the app's index.html with the head snippet first in <head>
 * (`src/index.marginalia.html`), used by the `development` build configuration — the one
 * `ng serve` uses — while `ng build` (production) keeps the original. The overlay then takes the
 * component from Angular's dev-mode metadata: `ng.getOwningComponent` for the component whose
 * template writes the element, and its class's debug info (file and line of the class) when
 * Angular provides it.
 */
import path from 'node:path'
import { SERVE_COMMAND, withHeadSnippet } from './head-snippet.js'
import type { Framework, Project } from './types.js'
import { envPort } from '../args.js'
import { readJsonc, setJsonc } from '../jsonc.js'
import { projectPort } from '../../http/project-port.js'

/** Angular 17 made the application builder the default; older apps build with webpack. */
const MIN_ANGULAR_MAJOR = 17
const DEV_INDEX = 'index.marginalia.html'

type Json = Record<string, unknown>

function majorOf(range: string | undefined): number | undefined {
  const m = range === undefined ? null : /(\d+)/.exec(range.replace(/^[^\d]*/, ''))
  return m ? Number(m[1]) : undefined
}

function object(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined
}

/** The index.html a build target uses (`index` as a string or `{ input }`, else `<sourceRoot>/index.html`). */
function indexOf(project: Json, options: Json): string {
  const index = options.index
  if (typeof index === 'string') return index
  const input = object(index)?.input
  if (typeof input === 'string') return input
  return path.posix.join(typeof project.sourceRoot === 'string' ? project.sourceRoot : 'src', 'index.html')
}

export const angular: Framework = {
  id: 'angular',
  name: 'Angular',
  detect: (p) => '@angular/core' in p.deps && p.find('angular.json') !== undefined,
  unsupported: (p) => {
    const major = majorOf(p.deps['@angular/core'])
    return major !== undefined && major < MIN_ANGULAR_MAJOR
      ? `Angular ${p.deps['@angular/core']} is older than Angular ${MIN_ANGULAR_MAJOR}: init sets up the application builder's development configuration only; paste the head snippet into your index.html by hand, for development only (see docs/guide/frameworks.md)`
      : undefined
  },
  devOrigin: 'http://localhost:4200',
  devScript: 'start',
  // `init` wires `start` to `marginalia dev -- ng serve`: one command starts and stops both.
  startsServer: true,
  setUp(p: Project, plan) {
    const file = path.join(p.root, 'angular.json')
    const text = p.read('angular.json')
    let workspace: Json | undefined
    try {
      workspace = object(JSON.parse(text ?? ''))
    } catch {
      workspace = undefined
    }
    if (!workspace) {
      plan.note('angular.json is not plain JSON: add the head snippet to a development-only index.html yourself (see docs/guide/frameworks.md)')
      return
    }
    // The page loads the overlay from the server `npm start` (`marginalia dev`) starts: the port
    // `marginalia dev` takes ($MARGINALIA_PORT, else the project's own), and the note names `npm start`.
    const scripts = p.read('package.json')
    const start = scripts === undefined ? undefined : (readJsonc(scripts) as { value?: { scripts?: { start?: unknown } } }).value?.scripts?.start
    const server = {
      port: process.env.MARGINALIA_PORT?.trim() ? envPort() : projectPort(p.root),
      command: typeof start === 'string' ? (p.packageManager === 'bun' ? 'bun run start' : `${p.packageManager} start`) : 'npx --no-install marginalia dev -- ng serve',
    }
    let changed = false
    for (const [name, value] of Object.entries(object(workspace.projects) ?? {})) {
      const project = object(value)
      const build = object(object(project?.architect)?.build)
      if (!project || project.projectType !== 'application' || !build) continue
      const options = object(build.options) ?? {}
      const configurations = (build.configurations = object(build.configurations) ?? {}) as Json
      const development = (configurations.development = object(configurations.development) ?? {}) as Json
      const source = indexOf(project, options)
      const devIndex = path.posix.join(path.posix.dirname(source), DEV_INDEX)
      const html = p.read(source)
      if (html === undefined) {
        plan.note(`project ${name}: ${source} not found; add the head snippet to its index.html for development yourself`)
        continue
      }
      const withSnippet = withHeadSnippet(html, path.basename(p.root), server)
      if (withSnippet === undefined) {
        plan.note(`project ${name}: ${source} has no <head>; add the head snippet yourself`)
        continue
      }
      plan.change(path.join(p.root, devIndex), withSnippet, `${source} with the Marginalia head snippet, for ng serve only (re-run init after editing ${source})`)
      const current = object(development.index)?.input ?? development.index
      if (current !== devIndex) {
        development.index = { input: devIndex, output: 'index.html' }
        changed = true
      }
    }
    if (changed) plan.change(file, `${JSON.stringify(workspace, null, 2)}\n`, 'ng serve (the development configuration) uses the index.html with the head snippet')
    // Angular's dev server offers no hook to start a server beside it: the start script runs both.
    if (scripts !== undefined && typeof start === 'string' && !start.includes('marginalia dev')) {
      plan.change(path.join(p.root, 'package.json'), setJsonc(scripts, ['scripts', 'start'], `marginalia dev -- ${start}`), `\`npm start\` runs ${start} with the Marginalia server beside it, and stops both`)
    } else if (typeof start !== 'string') plan.note(`no "start" script in package.json: run \`npx --no-install marginalia dev -- ng serve\` (or \`${SERVE_COMMAND} --port ${server.port}\` beside \`ng serve\`)`)
    plan.note('Angular\'s builders take no plugins, so elements carry no file:line: annotations name the component (from Angular\'s dev mode) and its file when Angular tells it')
  },
}
