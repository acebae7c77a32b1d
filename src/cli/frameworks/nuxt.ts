/** Nuxt 3 and 4: the `marginalia/nuxt` module in nuxt.config.* (it adds the Vite plugin and the overlay in `nuxt dev` only). */
import type { Framework, Project } from './types.js'
import { majorOf } from './vite.js'

const NUXT_CONFIGS = ['ts', 'mts', 'js', 'mjs'].map((e) => `nuxt.config.${e}`)

export const nuxt: Framework = {
  id: 'nuxt',
  name: 'Nuxt',
  detect: (p) => 'nuxt' in p.deps || 'nuxt-nightly' in p.deps || p.find(...NUXT_CONFIGS) !== undefined,
  unsupported: (p) => {
    const major = majorOf(p.deps.nuxt)
    return major !== undefined && major < 3
      ? `Nuxt ${p.deps.nuxt} (Nuxt 2, Vue 2) is not supported: upgrade to Nuxt 3 or later, or use the <script> tag with \`marginalia serve\` (see docs/guide/frameworks.md)`
      : undefined
  },
  devOrigin: 'http://localhost:3000',
  devScript: 'dev',
  startsServer: true,
  setUp(p: Project, plan) {
    const config = p.find(...NUXT_CONFIGS)
    if (config === undefined) {
      plan.note("no nuxt.config.* here: create one with  export default defineNuxtConfig({ modules: ['marginalia/nuxt'] })")
      return
    }
    const next = addNuxtModule(p.read(config) ?? '')
    if (next === null) plan.note(`could not find defineNuxtConfig({ in ${config}: add 'marginalia/nuxt' to its modules yourself`)
    else plan.change(config, next, 'the Marginalia module (in nuxt dev only: starts the server, injects the overlay, marks .vue elements)')
  },
}

/** `text` with 'marginalia/nuxt' first in its modules (the list added when there is none), the same text when it is there, or null. */
export function addNuxtModule(text: string): string | null {
  if (text.includes('marginalia/nuxt')) return text
  const modules = /\bmodules\s*:\s*\[/.exec(text)
  if (modules) {
    const at = modules.index + modules[0].length
    const rest = text.slice(at)
    const ownLine = /^[ \t]*\r?\n([ \t]*)(?=\S)/.exec(rest)
    const entry = ownLine ? `\n${ownLine[1]}'marginalia/nuxt',` : /^\s*\]/.test(rest) ? "'marginalia/nuxt'" : "'marginalia/nuxt', "
    return text.slice(0, at) + entry + rest
  }
  const define = /defineNuxtConfig\(\s*\{/.exec(text)
  if (!define) return null
  const at = define.index + define[0].length
  const rest = text.slice(at)
  const indent = /^[ \t]*\r?\n([ \t]*)(?=\S)/.exec(rest)?.[1] ?? '  '
  return `${text.slice(0, at)}\n${indent}modules: ['marginalia/nuxt'],${/^\s*\}/.test(rest) ? '\n' : ''}${rest}`
}
