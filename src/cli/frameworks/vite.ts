/** Plain Vite apps (React, Vue, Svelte, vanilla …): the plugin in vite.config.*. */
import { MIN_VITE_MAJOR } from '../../integrations/vite/version.js'
import type { Framework, Project } from './types.js'

const VITE_CONFIGS = ['ts', 'mts', 'js', 'mjs', 'cjs', 'cts'].map((e) => `vite.config.${e}`)

/** The major version a semver range in package.json starts from (`^4.2.0` → 4), or undefined. */
export function majorOf(range: string | undefined): number | undefined {
  const m = range === undefined ? null : /(\d+)(?:\.|$|\s)/.exec(range.replace(/^[^\d]*/, ''))
  return m ? Number(m[1]) : undefined
}

export const vite: Framework = {
  id: 'vite',
  name: 'Vite',
  detect: (p) => p.find(...VITE_CONFIGS) !== undefined || 'vite' in p.deps,
  unsupported: (p) => {
    const major = majorOf(p.deps.vite)
    return major !== undefined && major < MIN_VITE_MAJOR
      ? `Vite ${p.deps.vite} is older than Vite ${MIN_VITE_MAJOR}, the oldest the plugin supports: upgrade Vite, or use the <script> tag with \`marginalia serve\` (see docs/guide/frameworks.md)`
      : undefined
  },
  devOrigin: 'http://localhost:5173',
  devScript: 'dev',
  startsServer: true,
  setUp(p: Project, plan) {
    const config = p.find(...VITE_CONFIGS)
    if (config === undefined) {
      plan.note('no vite.config.* here: create one with `plugins: [marginalia()]` (import marginalia from \'marginalia/vite\')')
      return
    }
    const text = p.read(config) ?? ''
    const next = addVitePlugin(text, config.endsWith('.cjs') || config.endsWith('.cts'))
    if (next === null) plan.note(`could not find "plugins: [" in ${config}: add  import marginalia from 'marginalia/vite'  and  marginalia()  to its plugins yourself`)
    else plan.change(config, next, 'the Vite plugin (starts the server and injects the overlay in dev)')
  },
}

/** `text` with the Marginalia plugin added, the same text when it is there, or null when there is no plugins array. */
export function addVitePlugin(text: string, commonjs: boolean): string | null {
  if (text.includes('marginalia/vite')) return text
  const plugins = /plugins\s*:\s*\[/.exec(text)
  if (!plugins) return null
  const at = plugins.index + plugins[0].length
  const rest = text.slice(at)
  // One plugin a line (what the starters write): a line of its own at their indent; else first in the list.
  const ownLine = /^[ \t]*\r?\n([ \t]*)(?=\S)/.exec(rest)
  const call = ownLine ? `\n${ownLine[1]}marginalia(),` : /^\s*\]/.test(rest) ? 'marginalia()' : 'marginalia(), '
  const withCall = `${text.slice(0, at)}${call}${rest}`
  const line = commonjs ? "const marginalia = require('marginalia/vite').default\n" : "import marginalia from 'marginalia/vite'\n"
  const imports = [...withCall.matchAll(commonjs ? /^.*require\(.*\).*$/gm : /^import .*$/gm)]
  const last = imports.at(-1)
  if (!last) return line + withCall
  const end = last.index + last[0].length + 1
  return withCall.slice(0, end) + line + withCall.slice(end)
}
