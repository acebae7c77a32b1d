/**
 * `marginalia/nuxt`: a Nuxt module — `modules: ['marginalia/nuxt']` in nuxt.config — that does in
 * `nuxt dev` what `marginalia/vite` does in a Vite app: it adds the Vite plugin to Nuxt's client
 * and server builds (it starts the Marginalia server and marks every element of the app's .vue
 * files with its file:line, on the server-rendered HTML and in the browser alike), and a Nitro
 * plugin that puts the loader (which adds the overlay) first in the <head> of every page Nuxt renders.
 * `nuxt build` is left untouched, unless `sourceLocations: 'ids'` asks for a preview build marked
 * with ids (then only the marks: no overlay, no server).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { LOADER_PATH } from './shared/loader-script.js'
import marginalia, { type MarginaliaViteOptions } from './vite/plugin.js'

/** The Vite plugin's options, but the root: it is Nuxt's rootDir (paths are relative to the project, not to app/). */
export type MarginaliaNuxtOptions = Omit<MarginaliaViteOptions, 'root'>

/** What the module reads and changes of Nuxt (the shape of @nuxt/schema's Nuxt, so Nuxt is not a dependency). */
interface NuxtLike {
  options: {
    dev: boolean
    rootDir: string
    buildDir: string
    app: { baseURL: string; buildAssetsDir: string }
    vite: { plugins?: unknown[] }
    nitro: { plugins?: string[] }
    marginalia?: MarginaliaNuxtOptions
  }
}

const joinUrl = (...parts: string[]): string => `/${parts.map((p) => p.replace(/^\/+|\/+$/g, '')).filter(Boolean).join('/')}/`

/** The Nitro plugin's source: the loader's tag first in every rendered page's head. */
function nitroPlugin(tags: string): string {
  return `// Written by marginalia/nuxt in nuxt dev: the Marginalia loader (it adds the overlay), first in every page's <head>.
const TAGS = ${JSON.stringify(tags)}
export default function marginaliaTags(nitroApp) {
  nitroApp.hooks.hook('render:html', (html) => {
    html.head.unshift(TAGS)
  })
}
`
}

function marginaliaNuxt(inlineOptions: MarginaliaNuxtOptions | undefined, nuxt: NuxtLike): void {
  const options: MarginaliaNuxtOptions = { ...nuxt.options.marginalia, ...inlineOptions }
  if (!nuxt.options.dev && options.sourceLocations !== 'ids') return
  const plugin = marginalia({ ...options, root: nuxt.options.rootDir })
  nuxt.options.vite.plugins = [...(nuxt.options.vite.plugins ?? []), plugin]
  if (!nuxt.options.dev) return

  // Nuxt renders its pages in Nitro, never through Vite's transformIndexHtml: a Nitro plugin adds
  // the loader's tag (served by the Vite plugin under Nuxt's assets path; it adds the overlay).
  const assets = joinUrl(nuxt.options.app.baseURL, nuxt.options.app.buildAssetsDir)
  const attr = (v: string): string => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
  const tags = `<script src="${attr(`${assets}${LOADER_PATH}`)}" data-marginalia-loader></script>`
  const file = path.join(nuxt.options.buildDir, 'marginalia', 'nitro-tags.mjs')
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, nitroPlugin(tags))
  nuxt.options.nitro.plugins = [...(nuxt.options.nitro.plugins ?? []), file]
}

/** Nuxt reads a function module's name and config key from here. */
marginaliaNuxt.meta = { name: 'marginalia', configKey: 'marginalia' }

export default marginaliaNuxt
