/**
 * The Vite plugin (`marginalia/vite`, whose face is `index.ts`). The plugin runs only under `vite` / `vite dev` (never in
 * `vite build`), and it either reuses a server of this project's store already answering on the
 * project's port (e.g. `npx marginalia serve` started here, or the server of another dev server of
 * this project) or starts one inside the Vite process on the project's store file, closing it
 * when Vite's server closes. Another project's server is never adopted (project-server.ts).
 */
import { readFile } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import path from 'node:path'
import type { HtmlTagDescriptor, Plugin, ViteDevServer } from 'vite'
import type { StartedServer } from './start.js'
import { acquire, prewarm, registry, release, startServer, type Entry, type Running } from './servers.js'
import { DEFAULT_HOST, DEFAULT_PORT } from '../../http/defaults.js'
import { isLoopbackHost, isWildcardHost, urlHost } from '../../http/security.js'
import { DEFAULT_STORE_FILE } from '../../store/defaults.js'
import { fetchHealth, servesStore } from '../../http/health.js'
import { storeId } from '../../http/store-id.js'
import { projectName, projectPort } from '../../http/project-port.js'
import { claimProjectPort, describeServer, keepPort } from '../project-server.js'
import { runningViteVersion, viteTooOld } from './version.js'
import { DEFAULT_STATIC_DIR } from '../../http/static.js'
import { CONNECT_AGENT } from '../../http/connect.js'
import type { MarkOptions } from '../shared/source-marks.js'
import { MANIFEST_FILE, writeManifest } from '../shared/manifest.js'
import { PROXY_PREFIX, marginaliaProxy, type Middleware } from '../shared/proxy.js'
import { LOADER_PATH, loaderScript } from '../shared/loader-script.js'
import { injectIntoHtml } from '../shared/inject-html.js'

export interface MarginaliaViteOptions {
  /**
   * Port of the Marginalia server (default `MARGINALIA_PORT`, else this project's own port: the
   * one recorded in `.marginalia/port`, else one derived from the project's path, 4849–5848; 0 =
   * any free port, always a new server). A server already answering there is used only when it
   * serves this project's store: another project's is never adopted.
   */
  port?: number
  /** Address the server binds (default 127.0.0.1). Beyond loopback needs a token: use `marginalia serve` for that. */
  host?: string
  /** The store file, relative to the Vite root (default `.marginalia/store.json`). */
  store?: string
  /**
   * Start a server in the Vite process when none answers on the port (default true). With
   * false the plugin only injects the overlay and expects `marginalia serve` to be running.
   */
  start?: boolean
  /**
   * Source marks: 'paths' (default) adds `data-marginalia-source="file:line:col"` to
   * every element of the app's JSX/TSX, Vue and Svelte source in dev; 'ids' also marks
   * production builds, with short `data-mid` ids and a `marginalia-sources.json` manifest
   * beside the build (for `marginalia serve --sources`); false turns marking off.
   */
  sourceLocations?: 'paths' | 'ids' | false
  /**
   * The project root: source paths are relative to it, and the store file and the server's
   * source root are resolved from it (default: Vite's root). For frameworks whose Vite root is a
   * source folder (Nuxt's `app/`).
   */
  root?: string
  /** Globs (relative to the root) of files to mark (default: all app source outside node_modules). */
  include?: string[]
  /** Globs of files never to mark. */
  exclude?: string[]
  /** Where an 'ids' build writes its manifest (default `<root>/marginalia-sources.json`, outside the build output). */
  sourcesManifest?: string
  /** The overlay's annotate shortcut, e.g. `'Ctrl+Alt+M'` (default `Alt+Shift+A`): the script tag's `data-shortcut`. */
  shortcut?: string
  /**
   * Serve the overlay and its API through the dev server's own origin, under `/__marginalia/`
   * (default false: straight from the Marginalia server). For pages with a strict
   * Content-Security-Policy: `script-src 'self'; connect-src 'self'` then let it through.
   */
  sameOrigin?: boolean
  /**
   * A bearer token the server the plugin starts requires on every API, event-stream and MCP
   * request (as `marginalia serve --token`). Without one, the `sameOrigin` proxy answers only
   * clients on this machine, also when the dev server listens on the network (`vite --host`); with
   * one, it lets other clients through and the server asks them for the token. The overlay in a
   * page cannot send a token: from another device, use `marginalia serve` with sign-in.
   */
  token?: string
}

/** What the plugin is using, for tests and tools: the overlay's server and whether this process runs it. */
export interface MarginaliaViteState {
  url: string
  /** `started`: in this process; `reused`: another server answered on the port; `external`: start was false. */
  mode: 'started' | 'reused' | 'external'
  storeFile: string
}

export type MarginaliaVitePlugin = Plugin & {
  readonly marginalia: () => MarginaliaViteState | undefined
  /**
   * Settles when the dev server's Marginalia server has started (or been found, or failed to
   * start): its state then, undefined when there is none. The dev server does not wait for it.
   */
  readonly ready: () => Promise<MarginaliaViteState | undefined>
}

/**
 * The source marking, loaded with the first module it marks, not with the plugin: its parser (a
 * native binding) is most of the plugin's own import time, and Vite imports the plugin before it
 * starts.
 */
let marking: Promise<typeof import('../shared/source-marks.js')> | undefined
const marks = (): Promise<typeof import('../shared/source-marks.js')> => (marking ??= import('../shared/source-marks.js'))

/**
 * @internal For tests only, not part of the plugin's API: `start`, when set, is called with the plugin's own start (open the store, start
 * the server) and does it for the plugin, so a test can hold a start open and see what the dev
 * server does meanwhile.
 */
export const testing: { start?: (start: () => Promise<StartedServer>) => Promise<StartedServer> } = {}

const LOADER_ATTR = 'data-marginalia-loader'

/** A tag descriptor of the plugin's own (script, plain attributes) as HTML. */
function tagHtml(t: HtmlTagDescriptor): string {
  const attrs = Object.entries(t.attrs ?? {})
    .filter(([, v]) => v !== false && v !== undefined)
    .map(([k, v]) => (v === true || v === '' ? ` ${k}` : ` ${k}="${String(v).replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"`))
    .join('')
  return `<${t.tag}${attrs}></${t.tag}>`
}

export default function marginalia(options: MarginaliaViteOptions = {}): MarginaliaVitePlugin {
  const envPort = process.env.MARGINALIA_PORT?.trim()
  /** The port the person gave (the option, else MARGINALIA_PORT); undefined: the project's own port. */
  const givenPort = options.port ?? (envPort ? Number(envPort) : undefined)
  const host = options.host ?? DEFAULT_HOST
  const shouldStart = options.start ?? true
  if (givenPort !== undefined && (!Number.isInteger(givenPort) || givenPort < 0 || givenPort > 65_535)) throw new Error(`marginalia(): port must be a whole number from 0 to 65535 (got ${String(options.port ?? envPort)})`)
  /** The port in use: the one given, else the project's (known once the root is). */
  let port = givenPort ?? DEFAULT_PORT
  let state: MarginaliaViteState | undefined
  const sourceLocations = options.sourceLocations ?? 'paths'
  if (sourceLocations !== false && sourceLocations !== 'paths' && sourceLocations !== 'ids') throw new Error(`marginalia(): sourceLocations must be 'paths', 'ids' or false (got ${String(sourceLocations)})`)
  const markOptions: MarkOptions = { sourceLocations, ...(options.include ? { include: options.include } : {}), ...(options.exclude ? { exclude: options.exclude } : {}) }
  let root = process.cwd()
  let publicBase = '/'
  let building = false
  const ids = new Map<string, string>()
  const leases: (() => Promise<void>)[] = []
  /** The project its pages belong to, named on the overlay's tag: another project's server gets nothing from them. */
  let expected: { store: string; project: string } | undefined

  /** The overlay script's URL in the page: on the Marginalia server, or through the dev server (sameOrigin). */
  const overlaySrc = (): string => (options.sameOrigin ? `${publicBase}${PROXY_PREFIX.slice(1)}/overlay.js` : `${state?.url ?? ''}/overlay.js`)
  /** The command that starts the server this page expects, on its port (and store, when not the default). */
  const serveCommand = (onPort: string): string => `npx --no-install marginalia serve --port ${onPort}${options.store ? ` --store ${options.store}` : ''}`

  /** `vite --host` (or a server.host beyond loopback) without a token: said once, on the dev server's log. */
  let warnedExposed = false
  /** The server URL this plugin last announced on the dev server's log. */
  let announced: string | undefined
  const warnIfExposed = (devHost: string | boolean | undefined, logger: { warn(message: string): void }): void => {
    const exposed = devHost === true || (typeof devHost === 'string' && devHost !== '' && !isLoopbackHost(devHost))
    if (!exposed || options.token !== undefined || warnedExposed) return
    warnedExposed = true
    logger.warn(
      `marginalia: the dev server listens beyond this machine (server.host ${JSON.stringify(devHost)}) and no token is set: ${PROXY_PREFIX}/ answers only clients on this machine; others get 403. To let them through, set marginalia({ token }) (the server then asks them for it).`,
    )
  }

  /**
   * The one tag the plugin adds to a page: the loader, first in <head> (the page log starts on its
   * line, and it must hear the overlay script fail). It adds the overlay script itself once the
   * server has started, so the page's HTML never waits for that start: only the loader does.
   */
  const loaderTags = (): HtmlTagDescriptor[] => [{ tag: 'script', attrs: { src: `${publicBase}${LOADER_PATH}`, [LOADER_ATTR]: '' }, injectTo: 'head-prepend' }]
  /** A dev server is serving (configureServer ran) and its start has not failed: pages get the loader. */
  let serving = false
  let startFailed = false
  const injecting = (): boolean => serving && !startFailed

  /** Settles when the latest dev server's start has (never rejects). */
  let ready: Promise<void> = Promise.resolve()

  const releaseAll = async (): Promise<void> => {
    await Promise.all(leases.splice(0).map((r) => r()))
  }

  const plugin: MarginaliaVitePlugin = {
    name: 'marginalia',
    // Dev only; a build is touched only when it asks for 'ids' marks (else its output is byte-identical).
    apply: sourceLocations === 'ids' ? () => true : 'serve',
    enforce: 'pre',
    marginalia: () => state,
    ready: () => ready.then(() => state),

    // Before any other hook: on Vite < 5 the later ones fail page by page ("hook is not a function").
    config(this: { meta?: { viteVersion?: unknown } } | undefined, user, env) {
      const tooOld = viteTooOld(runningViteVersion(this?.meta, path.resolve(user.root ?? process.cwd())))
      if (tooOld !== undefined) throw new Error(tooOld)
      // A dev server is coming that may start a server: its worker loads its code meanwhile.
      if (shouldStart && env?.command === 'serve' && env.isPreview !== true) prewarm()
    },

    configResolved(config) {
      root = options.root ?? config.root
      publicBase = config.base.endsWith('/') ? config.base : `${config.base}/`
      building = config.command === 'build'
      // vite-plugin-solid: Solid's components leave nothing in the DOM, so their call sites are stamped at compile time.
      if (config.plugins.some((p) => p.name === 'solid')) markOptions.jsx = 'solid'
    },

    // Astro compiles .astro files in its own transform, which runs first: they are marked as they load.
    async load(id) {
      if (sourceLocations === false || !id.endsWith('.astro') || !path.isAbsolute(id)) return undefined
      const code = await readFile(id, 'utf8').catch(() => undefined)
      const out = code === undefined ? undefined : await (await marks()).markModule(code, id, root, markOptions)
      if (!out) return undefined
      if (out.ids) for (const [k, v] of Object.entries(out.ids)) ids.set(k, v)
      return { code: out.code, map: out.map }
    },

    async transform(code, id) {
      if (sourceLocations === false || id.split('?')[0]!.endsWith('.astro')) return undefined
      const out = await (await marks()).markModule(code, id, root, markOptions)
      if (!out) return undefined
      if (out.ids) for (const [k, v] of Object.entries(out.ids)) ids.set(k, v)
      return { code: out.code, map: out.map }
    },

    buildEnd() {
      if (building && sourceLocations === 'ids') writeManifest(path.resolve(root, options.sourcesManifest ?? MANIFEST_FILE), ids)
    },

    // Registers its middlewares at once and starts Marginalia's server beside the dev server, not
    // before it: Vite listens and serves pages meanwhile (they carry only the loader's tag), and
    // what needs the outcome (the loader, the sameOrigin proxy) waits for `ready`.
    configureServer(server: ViteDevServer) {
      const logger = server.config.logger
      let settled = false
      /** Runs `middleware` for the requests `concerned` picks once the start has settled; others go straight on. */
      const afterStart =
        (concerned: (req: IncomingMessage) => boolean, middleware: Middleware): Middleware =>
        (req, res, next) => {
          if (settled || !concerned(req)) return middleware(req, res, next)
          void ready.then(() => {
            try {
              middleware(req, res, next)
            } catch (e) {
              next(e)
            }
          })
        }
      const isLoader = (req: IncomingMessage): boolean => (req.url ?? '').split('?')[0] === `${publicBase}${LOADER_PATH}`
      serving = true
      startFailed = false
      // Pages a framework renders in its own middleware (React Router, SvelteKit, Astro …) never pass transformIndexHtml: the same tag goes in here.
      server.middlewares.use(injectIntoHtml(() => (injecting() ? loaderTags().map(tagHtml).join('') : undefined), LOADER_ATTR))
      if (options.sameOrigin) {
        const prefix = `${publicBase}${PROXY_PREFIX.slice(1)}`
        const isProxied = (req: IncomingMessage): boolean => {
          const url = req.url ?? '/'
          return url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`)
        }
        server.middlewares.use(afterStart(isProxied, marginaliaProxy(() => state?.url, prefix, { tokenConfigured: options.token !== undefined })))
        warnIfExposed(server.config.server.host, logger)
      }
      // The loader, once the start has settled: it adds the overlay, and a page loaded while the
      // server is not running says how to start it. After a failed start it adds nothing (the
      // dev server's log says why).
      server.middlewares.use(
        afterStart(isLoader, (req, res, next) => {
          if (!isLoader(req)) return next()
          if (!state) {
            res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store' }).end("/* Marginalia's server did not start (the dev server's log says why): no overlay. */\n")
            return
          }
          const { url } = state
          void readFile(path.join(DEFAULT_STATIC_DIR, 'early.js'), 'utf8')
            .catch(() => undefined)
            .then((early) => {
              const script = loaderScript({ overlay: overlaySrc(), command: serveCommand(new URL(url).port || String(port)), ...(early ? { early } : {}), ...(options.shortcut ? { shortcut: options.shortcut } : {}), ...(expected ? { expect: expected } : {}) })
              res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store' }).end(script)
            })
            .catch((e: unknown) => next(e))
        }),
      )
      const storeFile = path.resolve(root, options.store ?? DEFAULT_STORE_FILE)
      const displayHost = isWildcardHost(host) ? '127.0.0.1' : urlHost(host)
      expected = { store: storeId(storeFile), project: projectName(root) }
      if (givenPort === undefined) port = projectPort(root)
      const base = `http://${displayHost}:${port}`
      if (!shouldStart) {
        settled = true
        state = { url: base, mode: 'external', storeFile }
        ready = Promise.resolve()
        logger.info(`  marginalia: overlay from ${base} (start: false — run \`npx --no-install marginalia serve --port ${port} --store ${path.relative(process.cwd(), storeFile) || storeFile}\`)`)
        return
      }
      // One server per project and address in this process (the port is the project's choice, found below).
      const key = `${displayHost}:${givenPort ?? 'project'}:${storeFile}`
      // Loaded when the plugin starts a server, not with the plugin: the HTTP server and the store are
      // most of its weight, and a dev server that reuses a running server, or has none, never needs them.
      const startHere = (): Promise<Running> => startServer({ file: storeFile, port, host, ...(options.token !== undefined ? { token: options.token } : {}), root }, (m) => logger.warn(`marginalia: ${m}`))
      const at = (p: number): string => `http://${displayHost}:${p}`
      /** This dev server's hold on the server, once it takes one; `closed` once the dev server has closed. */
      let lease: Entry | undefined
      let closed = false
      const start = async (): Promise<void> => {
        // A server this process runs for the project (a dev server restarting) is taken over at once;
        // else the project's port: a server of this store there is used, another project's never.
        if (port !== 0 && !registry().has(key)) {
          const claim = await claimProjectPort({ root, storeFile, host, displayHost, ...(givenPort !== undefined ? { port: givenPort } : {}) })
          if (closed) return
          port = claim.port
          for (const p of claim.passed) logger.warn(`marginalia: passed over port ${p}`)
          keepPort(root, port, givenPort !== undefined)
          if (claim.reuse) {
            state = { url: at(port), mode: 'reused', storeFile }
            logger.info(`  marginalia: using this project's server already running at ${at(port)}/ (inbox) — MCP at ${at(port)}/mcp`)
            logger.info(`  marginalia: ${CONNECT_AGENT}`)
            return
          }
        }
        if (closed) return
        lease = acquire(key, () => (testing.start ? testing.start(startHere) : startHere()))
        let running: Running
        try {
          running = await lease.started
        } catch (e) {
          lease = undefined
          if (closed) return
          // Someone may have started one between the check and the start (two dev servers of this project at once).
          const health = port !== 0 ? await fetchHealth(at(port)) : null
          if (health && servesStore(health, storeFile)) {
            state = { url: at(port), mode: 'reused', storeFile }
            logger.info(`  marginalia: using this project's server already running at ${at(port)}/`)
            return
          }
          state = undefined
          startFailed = true
          logger.error(`marginalia: could not start the server on ${host}:${port}: ${health ? `the Marginalia server of ${describeServer(health)} took it` : e instanceof Error ? e.message : String(e)}. The overlay is not injected. Use another port with the plugin's \`port\` option, e.g. marginalia({ port: ${port === 0 ? DEFAULT_PORT + 1 : port + 1} }).`)
          return
        }
        // A dev server closed while the server started: `drop` lets go of it.
        if (closed) return
        state = { url: running.url, mode: 'started', storeFile }
        // Said once per plugin: Nuxt gives the same plugin to its client and its server dev servers.
        if (announced !== running.url) {
          announced = running.url
          logger.info(`  marginalia: inbox ${running.url}/ · MCP ${running.mcpUrl} · store ${path.relative(root, storeFile) || storeFile}`)
          logger.info(`  marginalia: ${CONNECT_AGENT}`)
        }
      }
      const starting = start()
        .catch((e: unknown) => {
          startFailed = true
          logger.error(`marginalia: ${e instanceof Error ? e.message : String(e)}`)
        })
        .finally(() => {
          settled = true
        })
      ready = starting
      /** Lets go of this dev server's hold, once the start has settled (a start in flight is released as it ends). */
      const drop = async (): Promise<void> => {
        if (closed) return
        closed = true
        await starting
        if (!lease) return
        const held = lease
        lease = undefined
        await release(key, held).catch((e: unknown) => logger.error(`marginalia: closing the server failed: ${e instanceof Error ? e.message : String(e)}`))
      }
      // Released with this dev server: its HTTP server closing (also on restart), or the close hooks in middleware mode.
      if (server.httpServer) server.httpServer.once('close', () => void drop())
      else leases.push(drop)
    },

    transformIndexHtml: {
      order: 'post',
      handler(): HtmlTagDescriptor[] | undefined {
        return injecting() ? loaderTags() : undefined
      },
    },

    // Vite 8's hook for a closing dev server; older versions run closeBundle then.
    closeServer: releaseAll,
    closeBundle: releaseAll,
  }
  return plugin
}


export { marginalia }
