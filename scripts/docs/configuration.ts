/**
 * docs/reference/configuration.md: the flags of `serve` and `mcp` (their options and help lines),
 * the environment variables the code reads, the overlay's script-tag attributes, and the options
 * of the build plugins and the embedding API (their TypeScript declarations).
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import type { Command } from '../../src/cli/command.js'
import { loadCommands } from '../../src/cli/commands.js'
import type { Declarations } from './declarations.js'
import { code, page, table, type ReferencePage } from './markdown.js'

const COMMANDS = await loadCommands()

/** What each environment variable the code reads means. The generator fails on one read but not described here. */
const ENVIRONMENT: Readonly<Record<string, string>> = {
  MARGINALIA_STORE: 'The store of every command, the Vite plugin excepted: a file path or a `postgres://` URL (`--store` wins).',
  DATABASE_URL: 'Used as the store when it is a `postgres://` URL and neither `--store` nor `MARGINALIA_STORE` is set.',
  MARGINALIA_PORT: 'The default port of `serve`, `doctor`, the Vite plugin, `marginalia/next` and the two-store check of `mcp` (else 4848).',
  MARGINALIA_TOKEN: '`serve`: require `Authorization: Bearer <token>` on the API, events and MCP; the inbox commands with `--url` (`list`, `watch`, `ack`…): the token they send (`--token` wins).',
  MARGINALIA_PUBLIC_URL: '`people add` and `people link`: the server\'s address in sign-in links (`--public-url` wins).',
  MARGINALIA_URL: '`marginalia/next`: the Marginalia server the pages load the overlay from (default `http://127.0.0.1:$MARGINALIA_PORT`; the `server` option wins).',
  MARGINALIA_SOURCES: '`marginalia/next`: `ids` makes `next build` a preview build (`data-mid` ids, `marginalia-sources.json`, the overlay loaded).',
  MARGINALIA_STORE_ID: 'Set by `marginalia/next` in `next dev`: the id of the project\'s store, put on the overlay\'s tag (`data-store`) by `instrumentation-client`. Not for you to set.',
  MARGINALIA_PROJECT: 'Set by `marginalia/next` in `next dev`: the project\'s name, put on the overlay\'s tag (`data-project`) by `instrumentation-client`. Not for you to set.',
  MARGINALIA_OVERLAY: 'Set by `marginalia/next` for the app (the overlay\'s URL in `next dev` and preview builds, else empty); `instrumentation-client` loads the overlay when it is set. Not for you to set.',
  REPRO_BASE_URL: 'Read by the test `marginalia repro` writes, not by Marginalia: the origin to replay against (default: the origin the steps were recorded on).',
  REPRO_STEP_: 'Read by the test `marginalia repro` writes: `REPRO_STEP_<n>` is the value to type at step n when it was not recorded (a password, a masked field).',
}

/** What each attribute of the overlay's `<script>` tag does. The generator fails on one read but not described here. */
const SCRIPT_ATTRIBUTES: Readonly<Record<string, string>> = {
  server: 'The Marginalia server to talk to (default: where `overlay.js` was loaded from).',
  shortcut: 'The annotate shortcut, e.g. `Ctrl+Alt+M` (default `Alt+Shift+A`): modifiers `Ctrl`, `Alt`, `Shift`, `Meta` and a key; a bare key is refused.',
  store: 'The id of the store of the project this page belongs to (set by the build plugins): a server serving another store gets nothing; the overlay says so, naming both projects.',
  project: 'The name of the project this page belongs to (set by the build plugins and the head snippet `init` writes): a server of another project gets nothing.',
  screenshotBudget: 'Milliseconds an element screenshot may take, capture and upload together (200 to 60 000, default 1 000).',
  prefetch: 'When the overlay\'s chunks (`chunks/<name>-<HASH>.js`: annotate mode and the panels, their styles, screenshots and source locations) are fetched. Absent: on intent — annotate mode and the panels\' styles when the pointer enters the toolbar, Annotate gets focus or is pressed; screenshots and sources when annotate mode starts — so a page fetches only `overlay.js` until the person reaches for the toolbar. `idle`: all of them in the browser\'s idle time after the page has loaded. `false`: each only when first needed (Annotate, a pin, Send, an agent\'s capture request).',
  maskInputs: '`maskInputs`: `true` keeps no typed value in the steps to reproduce, `false` keeps them (never passwords, card, one-time-code or hidden fields, nor anything in `[data-marginalia-mask]`/`[data-private]`). Absent: masked except on local dev origins (localhost, `*.localhost`, 127.x, [::1]). On the head snippet\'s `loader.js` tag too; the browser extension has the same setting.',
}

interface Flag {
  flag: string
  value: string
  meaning: string
}

const OPTION_LINE = /^ {2}(?:-(\w), | {4})--([\w-]+)(?: ([A-Z][\w|:/.]*(?: \.\.\.)?|a,b))?\s+(.*)$/

/** A command's flags: each option it takes with the help line that explains it (continuation lines joined). */
function flagsOf(name: string, command: Command): Flag[] {
  const lines = command.usage.split('\n')
  const start = lines.indexOf('Options:')
  const flags = new Map<string, Flag>()
  let last: Flag | undefined
  for (const line of lines.slice(start + 1)) {
    const m = OPTION_LINE.exec(line)
    if (m) {
      last = { flag: `${m[1] ? `-${m[1]}, ` : ''}--${m[2]!}`, value: m[3] ?? '', meaning: m[4]!.trim() }
      flags.set(m[2]!, last)
    } else if (last && /^ {8,}\S/.test(line)) last.meaning += ` ${line.trim()}`
    else last = undefined
  }
  const undocumented = Object.keys(command.options).filter((o) => !flags.has(o))
  if (undocumented.length > 0) throw new Error(`docs: marginalia ${name} --help does not explain ${undocumented.map((o) => `--${o}`).join(', ')}`)
  return Object.keys(command.options).map((o) => flags.get(o)!)
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .sort()
}

/** Names the code reads with `pattern` (its first group), and where: `NAME → [files]`. */
function readsOf(files: readonly string[], root: string, pattern: RegExp): Map<string, string[]> {
  const found = new Map<string, string[]>()
  for (const file of files) {
    for (const m of readFileSync(file, 'utf8').matchAll(pattern)) {
      const where = found.get(m[1]!) ?? []
      const relative = path.relative(root, file).split(path.sep).join('/')
      if (!where.includes(relative)) where.push(relative)
      found.set(m[1]!, where)
    }
  }
  return found
}

function described(kind: string, read: Map<string, string[]>, meanings: Readonly<Record<string, string>>): [string, string, string[]][] {
  const unknown = [...read.keys()].filter((k) => !(k in meanings))
  if (unknown.length > 0) throw new Error(`docs: the code reads ${kind} ${unknown.join(', ')}: describe it in scripts/docs/configuration.ts`)
  const stale = Object.keys(meanings).filter((k) => !read.has(k))
  if (stale.length > 0) throw new Error(`docs: scripts/docs/configuration.ts describes ${kind} ${stale.join(', ')}, which the code no longer reads`)
  return Object.entries(meanings).map(([name, meaning]) => [name, meaning, read.get(name)!])
}

function optionsTable(declarations: Declarations, file: string, name: string): string {
  const rows = declarations.properties(declarations.exported(file, name)).map((p) => [code(p.name), code(p.type), p.doc])
  return table(['option', 'type', 'meaning'], rows)
}

export function configurationPage(root: string, declarations: Declarations): ReferencePage {
  const src = path.join(root, 'src')
  const nodeFiles = sourceFiles(src).filter((f) => !f.startsWith(path.join(src, 'browser')))
  const environment = described('the environment variable', readsOf(nodeFiles, root, /process\.env\.([A-Z][A-Z0-9_]*)/g), ENVIRONMENT)
  const attributes = described('the script attribute', readsOf(sourceFiles(path.join(src, 'browser', 'overlay')), root, /script\??\.dataset\.(\w+)/g), SCRIPT_ATTRIBUTES)
  const kebab = (name: string): string => `data-${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
  const flagTable = (name: string): string => {
    const command = COMMANDS[name]
    if (!command) throw new Error(`docs: no command ${name}`)
    return table(['flag', 'value', 'meaning'], flagsOf(name, command).map((f) => [code(f.flag), f.value && code(f.value), f.meaning]))
  }
  return page(
    'docs/reference/configuration.md',
    'Configuration',
    'the options and help lines of `marginalia serve` and `marginalia mcp`, the environment variables and script-tag attributes the code reads, and the TypeScript declarations of the plugin and embedding options',
    [
      'Everything Marginalia can be told, where it is told. Flags win over environment variables, which win over the defaults.',
      ['## marginalia serve', '', 'What `npm start` runs: REST, live events, the overlay and the inbox, MCP over HTTP. See the [server guide](../guide/http-server.md).', '', flagTable('serve')].join('\n'),
      ['## marginalia mcp', '', 'MCP over stdio, what an agent launches.', '', flagTable('mcp')].join('\n'),
      ['## Environment variables', '', table(['variable', 'meaning', 'read in'], environment.map(([name, meaning, files]) => [code(name), meaning, files.map(code).join(', ')]))].join('\n'),
      [
        '## The overlay\'s script tag',
        '',
        '`<script src="http://127.0.0.1:4848/overlay.js" defer></script>` takes these attributes. `overlay.js` fetches its chunks from `chunks/` beside it (else from the server): a page that serves `overlay.js` from its own origin serves `dist/overlay/chunks/` with it.',
        '',
        table(['attribute', 'meaning'], attributes.map(([name, meaning]) => [code(kebab(name)), meaning])),
      ].join('\n'),
      ['## Vite plugin: `marginalia/vite`', '', '`marginalia(options)` in `vite.config.*`; see [frameworks and source locations](../guide/frameworks.md).', '', optionsTable(declarations, 'src/integrations/vite/plugin.ts', 'MarginaliaViteOptions')].join('\n'),
      ['## webpack and rspack: `marginalia/webpack`', '', '`marginaliaWebpack(options)`, `marginaliaRspack(options)`; the loader `marginalia/loader` (Turbopack rules) takes the same but `root` and `manifest`.', '', optionsTable(declarations, 'src/integrations/webpack.ts', 'MarginaliaSourcesOptions')].join('\n'),
      ['## Next.js: `marginalia/next`', '', '`withMarginalia(nextConfig, options)` in `next.config.*` (`marginalia init` writes it); see [Next.js](../guide/frameworks.md#nextjs).', '', optionsTable(declarations, 'src/integrations/next.ts', 'MarginaliaNextOptions')].join('\n'),
      ['## Embedding: `openStore(options)`', '', optionsTable(declarations, 'src/index.ts', 'OpenStoreOptions')].join('\n'),
      ['## Embedding: `createServer(store, options)`', '', '`createToolRegistry(store, options)` takes the same but `registry` and `outputSchemas`; see the [embedding guide](../guide/embedding.md).', '', optionsTable(declarations, 'src/index.ts', 'ServerOptions')].join('\n'),
      ['## Embedding: `startHttpServer(store, options)`', '', optionsTable(declarations, 'src/index.ts', 'HttpServerOptions')].join('\n'),
    ],
  )
}
