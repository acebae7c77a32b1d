/**
 * `marginalia/astro`: an Astro integration — `integrations: [marginalia()]` in astro.config — that
 * adds the Vite plugin in `astro dev` only: it starts the Marginalia server, puts the loader and
 * the overlay first in the <head> of every page Astro renders, and marks the elements of .astro
 * templates and of React, Vue and Svelte islands with their file:line. `astro build` is left
 * untouched, unless `sourceLocations: 'ids'` asks for a preview build marked with ids (then only
 * the marks and the manifest: no overlay, no server).
 */
import { fileURLToPath } from 'node:url'
import marginalia, { type MarginaliaViteOptions } from './vite/plugin.js'

/** The Vite plugin's options, but the root: it is Astro's project root. */
export type MarginaliaAstroOptions = Omit<MarginaliaViteOptions, 'root'>

/** The part of Astro's integration API this uses (its shape, so Astro is not a dependency). */
interface AstroIntegrationLike {
  name: string
  hooks: {
    'astro:config:setup': (params: { command: 'dev' | 'build' | 'preview' | 'sync'; config: { root: URL }; updateConfig: (config: { vite: { plugins: unknown[] } }) => unknown }) => void
  }
}

export default function marginaliaAstro(options: MarginaliaAstroOptions = {}): AstroIntegrationLike {
  return {
    name: 'marginalia',
    hooks: {
      'astro:config:setup': ({ command, config, updateConfig }) => {
        if (command !== 'dev' && !(command === 'build' && options.sourceLocations === 'ids')) return
        updateConfig({ vite: { plugins: [marginalia({ ...options, root: fileURLToPath(config.root) })] } })
      },
    },
  }
}
