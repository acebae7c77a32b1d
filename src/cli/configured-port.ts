/**
 * The port the app really uses for its Marginalia server, as `doctor` finds it without running
 * the app: a port written in the integration's options (`marginalia({ port: 5123 })` in
 * vite.config.* or astro.config.*, `marginalia: { port }` in nuxt.config.*,
 * `withMarginalia(config, { port })` or its `server` URL in next.config.*), the port in a head
 * snippet (the development page init writes, index.marginalia.html; for set-ups where nothing
 * starts the server, also an index.html), else the project's own port (recorded in
 * `.marginalia/port`, else derived from its path) for the integrations that start the server, and
 * `marginalia serve`'s for the rest. Only literal numbers are read: a port computed in the config
 * is not guessed (pass --port).
 */
import { readFileSync } from 'node:fs'
import { DEFAULT_PORT } from '../http/defaults.js'
import { derivedPort, parsePort, recordedPort } from '../http/project-port.js'
import type { Framework, Project } from './frameworks/types.js'

export interface ConfiguredPort {
  port: number
  /** Where it comes from, said by doctor: `vite.config.ts`, `.marginalia/port` … */
  from: string
}

const EXTENSIONS = ['ts', 'mts', 'js', 'mjs', 'cjs', 'cts']
const configs = (name: string): string[] => EXTENSIONS.map((e) => `${name}.${e}`)

/** The literal `port:` inside the first `call(` … `)` options of `text`, or of a `key: {` block. */
function portIn(text: string, pattern: RegExp): number | undefined {
  const at = pattern.exec(text)
  if (!at) return undefined
  // The options object that follows: up to its closing brace (no nesting in the options read here).
  const rest = text.slice(at.index + at[0].length)
  const open = rest.indexOf('{')
  const close = rest.indexOf('}')
  if (open < 0 || close < open || /[)\]]/.test(rest.slice(0, open))) {
    const server = /\bserver\s*:\s*['"`]https?:\/\/[^'"`/]+:(\d+)/.exec(rest.slice(0, 400))
    return server ? parsePort(server[1]!) : undefined
  }
  const options = rest.slice(open, close)
  const port = /\bport\s*:\s*(\d+)/.exec(options)?.[1]
  if (port !== undefined) return parsePort(port)
  const server = /\bserver\s*:\s*['"`]https?:\/\/[^'"`/]+:(\d+)/.exec(options)?.[1]
  return server !== undefined ? parsePort(server) : undefined
}

/** Where each integration's options are written, and how to find them. */
const SOURCES: { files: string[]; pattern: RegExp }[] = [
  { files: configs('vite.config'), pattern: /\bmarginalia\s*\(/ },
  { files: configs('astro.config'), pattern: /\bmarginalia\s*\(/ },
  { files: configs('nuxt.config'), pattern: /\bmarginalia\s*:\s*(?=\{)/ },
  { files: configs('next.config'), pattern: /\bwithMarginalia\s*\([\s\S]*?,\s*(?=\{)/ },
]

/** The port the head snippet in `html` loads from (`http://127.0.0.1:4848/loader.js`). */
function snippetPort(html: string): number | undefined {
  const m = /https?:\/\/(?:127\.0\.0\.1|localhost|\[::1\]):(\d+)\/loader\.js/.exec(html)
  return m ? parsePort(m[1]!) : undefined
}

/** The port the app at `project` uses (see the module comment). */
export function configuredPort(project: Project, framework: Framework): ConfiguredPort {
  for (const { files, pattern } of SOURCES) {
    const file = project.find(...files)
    if (file === undefined) continue
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue
    }
    const port = portIn(text, pattern)
    if (port !== undefined) return { port, from: file.slice(project.root.length + 1) }
  }
  // The development page init writes (Angular's) holds the port its server must answer on; a plain
  // index.html counts only where nothing starts the project's own server.
  const pages = ['src/index.marginalia.html', 'index.marginalia.html', ...(framework.startsServer ? [] : ['index.html', 'public/index.html'])]
  const page = project.find(...pages)
  const port = page === undefined ? undefined : snippetPort(project.read(page.slice(project.root.length + 1)) ?? '')
  if (port !== undefined) return { port, from: page!.slice(project.root.length + 1) }
  if (!framework.startsServer) return { port: DEFAULT_PORT, from: '`marginalia serve`\'s default' }
  const recorded = recordedPort(project.root)
  if (recorded !== undefined) return { port: recorded, from: '.marginalia/port (where the dev server last started it)' }
  return { port: derivedPort(project.root), from: 'this project\'s own port, derived from its path' }
}
