/** Astro: the `marginalia/astro` integration in astro.config.* (it adds the Vite plugin in `astro dev` only). */
import type { Framework, Project } from './types.js'
import { majorOf } from './vite.js'

const ASTRO_CONFIGS = ['mjs', 'ts', 'mts', 'js', 'cjs', 'cts'].map((e) => `astro.config.${e}`)

export const astro: Framework = {
  id: 'astro',
  name: 'Astro',
  detect: (p) => 'astro' in p.deps || p.find(...ASTRO_CONFIGS) !== undefined,
  unsupported: (p) => {
    const major = majorOf(p.deps.astro)
    return major !== undefined && major < 4
      ? `Astro ${p.deps.astro} is older than Astro 4, the oldest the integration supports (its Vite is older than Vite 5): upgrade Astro, or use the <script> tag with \`marginalia serve\` (see docs/guide/frameworks.md)`
      : undefined
  },
  devOrigin: 'http://localhost:4321',
  devScript: 'dev',
  startsServer: true,
  setUp(p: Project, plan) {
    const config = p.find(...ASTRO_CONFIGS)
    if (config === undefined) {
      plan.note("no astro.config.* here: create one with  import marginalia from 'marginalia/astro'  and  export default defineConfig({ integrations: [marginalia()] })")
      return
    }
    const next = addAstroIntegration(p.read(config) ?? '')
    if (next === null) plan.note(`could not find defineConfig({ in ${config}: add  import marginalia from 'marginalia/astro'  and  marginalia()  to its integrations yourself`)
    else plan.change(config, next, 'the Marginalia integration (in astro dev only: starts the server, injects the overlay, marks .astro elements and islands)')
  },
}

/** `text` with marginalia() first in its integrations (the list added when there is none) and its import, the same text when it is there, or null. */
export function addAstroIntegration(text: string): string | null {
  if (text.includes('marginalia/astro')) return text
  let withCall: string
  const list = /\bintegrations\s*:\s*\[/.exec(text)
  if (list) {
    const at = list.index + list[0].length
    const rest = text.slice(at)
    const ownLine = /^[ \t]*\r?\n([ \t]*)(?=\S)/.exec(rest)
    withCall = text.slice(0, at) + (ownLine ? `\n${ownLine[1]}marginalia(),` : /^\s*\]/.test(rest) ? 'marginalia()' : 'marginalia(), ') + rest
  } else {
    const define = /defineConfig\(\s*\{/.exec(text)
    if (!define) return null
    const at = define.index + define[0].length
    const rest = text.slice(at)
    const indent = /^[ \t]*\r?\n([ \t]*)(?=\S)/.exec(rest)?.[1] ?? '  '
    withCall = `${text.slice(0, at)}\n${indent}integrations: [marginalia()],${/^\s*\}/.test(rest) ? '\n' : ''}${rest}`
  }
  const imports = [...withCall.matchAll(/^import .*$/gm)]
  const last = imports.at(-1)
  const line = `import marginalia from 'marginalia/astro'${last?.[0].trimEnd().endsWith(';') ? ';' : ''}\n`
  if (!last) return line + withCall
  const end = last.index + last[0].length + 1
  return withCall.slice(0, end) + line + withCall.slice(end)
}
