/**
 * `marginalia init` in Nuxt and Astro apps: the module or integration added the way the config is
 * written (a list one entry a line, inline, none at all, the minimal starters' empty config), left
 * alone when it is there; the framework recognised before plain Vite (SvelteKit, Nuxt and Astro
 * apps have Vite too); old majors refused with what works instead; doctor's dev origin.
 */
import { describe, expect, it } from 'vitest'
import { addAstroIntegration } from '../../../src/cli/frameworks/astro.js'
import { detectFramework } from '../../../src/cli/frameworks/index.js'
import { addNuxtModule } from '../../../src/cli/frameworks/nuxt.js'
import type { Project } from '../../../src/cli/frameworks/types.js'

const project = (deps: Record<string, string>, files: Record<string, string> = {}): Project => ({
  root: '/app',
  deps,
  packageManager: 'npm',
  find: (...names) => names.filter((n) => n in files).map((n) => `/app/${n}`)[0],
  read: (f) => files[f.replace(/^\/app\//, '')],
})

describe('init: Nuxt', () => {
  it("adds a modules list to the minimal starter's config, first in an existing list (one a line, or inline), and leaves it alone when it is there", () => {
    const minimal = "export default defineNuxtConfig({\n  compatibilityDate: '2025-07-15',\n  devtools: { enabled: true }\n})\n"
    expect(addNuxtModule(minimal)).toBe("export default defineNuxtConfig({\n  modules: ['marginalia/nuxt'],\n  compatibilityDate: '2025-07-15',\n  devtools: { enabled: true }\n})\n")
    expect(addNuxtModule('export default defineNuxtConfig({})\n')).toBe("export default defineNuxtConfig({\n  modules: ['marginalia/nuxt'],\n})\n")
    expect(addNuxtModule("export default defineNuxtConfig({\n  modules: [\n    '@nuxt/ui',\n  ],\n})\n")).toBe("export default defineNuxtConfig({\n  modules: [\n    'marginalia/nuxt',\n    '@nuxt/ui',\n  ],\n})\n")
    expect(addNuxtModule("export default defineNuxtConfig({ modules: ['@nuxt/ui'] })\n")).toBe("export default defineNuxtConfig({ modules: ['marginalia/nuxt', '@nuxt/ui'] })\n")
    const done = "export default defineNuxtConfig({ modules: [['marginalia/nuxt', { port: 4900 }]] })\n"
    expect(addNuxtModule(done)).toBe(done)
    expect(addNuxtModule('export default {}\n')).toBeNull()
  })

  it('is recognised before Vite; Nuxt 2 is refused with what works instead; its dev server is on port 3000', () => {
    const nuxt = detectFramework(project({ nuxt: '^4.3.1', vue: '^3.5.0' }, { 'nuxt.config.ts': '' }))
    expect(nuxt.id).toBe('nuxt')
    expect(nuxt.devOrigin).toBe('http://localhost:3000')
    expect(nuxt.unsupported?.(project({ nuxt: '^4.3.1' }))).toBeUndefined()
    expect(nuxt.unsupported?.(project({ nuxt: '^2.17.0' }))).toMatch(/Nuxt 2, Vue 2\) is not supported: upgrade to Nuxt 3 or later, or use the <script> tag/)
  })
})

describe('init: Astro', () => {
  it("adds the integration and its import to the minimal starter's empty config, first in an existing list, and leaves it alone when it is there", () => {
    const minimal = "// @ts-check\nimport { defineConfig } from 'astro/config';\n\n// https://astro.build/config\nexport default defineConfig({});\n"
    expect(addAstroIntegration(minimal)).toBe("// @ts-check\nimport { defineConfig } from 'astro/config';\nimport marginalia from 'marginalia/astro';\n\n// https://astro.build/config\nexport default defineConfig({\n  integrations: [marginalia()],\n});\n")
    expect(addAstroIntegration("import { defineConfig } from 'astro/config'\nimport react from '@astrojs/react'\nexport default defineConfig({\n  integrations: [react()],\n})\n")).toBe(
      "import { defineConfig } from 'astro/config'\nimport react from '@astrojs/react'\nimport marginalia from 'marginalia/astro'\nexport default defineConfig({\n  integrations: [marginalia(), react()],\n})\n",
    )
    const done = "import marginalia from 'marginalia/astro'\nexport default defineConfig({ integrations: [marginalia({ port: 4900 })] })\n"
    expect(addAstroIntegration(done)).toBe(done)
    expect(addAstroIntegration('export default {}\n')).toBeNull()
  })

  it('is recognised before Vite; Astro < 4 is refused; its dev server is on port 4321', () => {
    const astro = detectFramework(project({ astro: '5.18.2', vite: '^6.0.0' }, { 'astro.config.mjs': '' }))
    expect(astro.id).toBe('astro')
    expect(astro.devOrigin).toBe('http://localhost:4321')
    expect(astro.unsupported?.(project({ astro: '^3.6.0' }))).toMatch(/older than Astro 4/)
  })
})

describe('init: SvelteKit', () => {
  it('is recognised before Vite (its vite.config has sveltekit()); its dev server is on port 5173', () => {
    const kit = detectFramework(project({ '@sveltejs/kit': '^2.70.0', vite: '^8.0.0' }, { 'vite.config.ts': '' }))
    expect(kit.id).toBe('sveltekit')
    expect(kit.name).toBe('SvelteKit')
    expect(kit.devOrigin).toBe('http://localhost:5173')
    expect(kit.unsupported?.(project({ '@sveltejs/kit': '^1.0.0', vite: '^4.5.0' }))).toMatch(/older than Vite 5/)
  })
})
