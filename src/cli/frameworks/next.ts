/**
 * Next.js (App Router and Pages Router; Turbopack and webpack): `withMarginalia` around the
 * config in next.config.* (marks and the overlay's URL in `next dev` only) and a few lines in
 * instrumentation-client.* that load the overlay when that URL is set. `next dev` starts the
 * project's Marginalia server itself (withMarginalia), as the Vite plugin does.
 */
import path from 'node:path'
import { parseSync } from 'oxc-parser'
import type { Framework, Project } from './types.js'

const CONFIGS = ['ts', 'mts', 'mjs', 'js', 'cjs', 'cts'].map((e) => `next.config.${e}`)

/** The oldest Next.js init sets up: rule conditions in top-level `turbopack` rules, Turbopack by default (16.0; tested on 16.4). */
const MIN_NEXT: readonly [number, number] = [16, 0]

/** The lines instrumentation-client.* gets (typed in a TypeScript file): they load the overlay when next.config's withMarginalia set its URL. */
const clientBlock = (ts: boolean): string => CLIENT_BLOCK.replace('/*: number*/', ts ? ': number' : '')
const CLIENT_BLOCK = `// Marginalia's overlay, in \`next dev\` only (and in a preview build made with MARGINALIA_SOURCES=ids):
// withMarginalia() in next.config sets MARGINALIA_OVERLAY; in any other build it is empty and this goes away.
// While its server is not answering, a note says so and the overlay is tried again (no reload needed).
if (process.env.MARGINALIA_OVERLAY) {
  const note = document.createElement("div");
  const load = (tries/*: number*/) => {
    const script = document.createElement("script");
    script.src = process.env.MARGINALIA_OVERLAY + (tries ? "?retry=" + tries : "");
    script.setAttribute("data-marginalia", "");
    script.setAttribute("data-store", process.env.MARGINALIA_STORE_ID || "");
    script.setAttribute("data-project", process.env.MARGINALIA_PROJECT || "");
    script.onload = () => note.remove();
    script.onerror = () => {
      script.remove();
      note.textContent = "Marginalia server not running \u2014 it starts with \`next dev\`; trying again\u2026";
      note.style.cssText = "position:fixed;right:16px;bottom:16px;z-index:2147483647;padding:10px 14px;border-radius:12px;background:#0f172a;color:#f8fafc;font:13px/1.45 system-ui,sans-serif";
      note.setAttribute("data-marginalia-loader", "");
      document.documentElement.appendChild(note);
      setTimeout(() => load(tries + 1), Math.min(30000, 2000 * 1.5 ** tries));
    };
    document.head.appendChild(script);
  };
  load(0);
}
`

/** major.minor a semver range in package.json starts from (`^16.1.0` → [16, 1]), or undefined. */
function versionOf(range: string | undefined): [number, number] | undefined {
  const m = range === undefined ? null : /^(\d+)(?:\.(\d+))?/.exec(range.replace(/^[^\d]*/, ''))
  return m ? [Number(m[1]), Number(m[2] ?? 0)] : undefined
}

interface Node {
  type: string
  start: number
  end: number
  [key: string]: unknown
}

/**
 * `text` (a next.config) with its exported config wrapped in withMarginalia(…) and the import
 * added; the same text when it is there already; null when no export is found.
 */
export function wrapNextConfig(text: string, file: string): string | null {
  if (text.includes('marginalia/next')) return text
  const { program } = parseSync(file, text, { lang: /\.[cm]?ts$/.test(file) ? 'ts' : 'js' })
  const body = program.body as unknown as Node[]
  let target: Node | undefined
  let commonjs = false
  for (const stmt of body) {
    if (stmt.type === 'ExportDefaultDeclaration') target = stmt.declaration as Node
    if (stmt.type === 'ExpressionStatement') {
      const e = stmt.expression as Node & { operator?: string; left?: Node & { object?: { name?: string }; property?: { name?: string } }; right?: Node }
      if (e.type === 'AssignmentExpression' && e.left?.type === 'MemberExpression' && e.left.object?.name === 'module' && e.left.property?.name === 'exports' && e.right) {
        target = e.right
        commonjs = true
      }
    }
  }
  if (!target) return null
  const wrapped = `${text.slice(0, target.start)}withMarginalia(${text.slice(target.start, target.end)})${text.slice(target.end)}`
  // In the file's own style: its quotes, and semicolons when it ends its statements with them.
  const q = /^(?:import|const) [^\n]*"[^\n]*$/m.test(text) ? '"' : "'"
  const semi = /;\s*$/.test(text.slice(target.end)) ? ';' : ''
  const line = commonjs ? `const { withMarginalia } = require(${q}marginalia/next${q})${semi}\n` : `import { withMarginalia } from ${q}marginalia/next${q}${semi}\n`
  const imports = body.filter((s) => (commonjs ? s.type === 'VariableDeclaration' && /\brequire\(/.test(text.slice(s.start, s.end)) : s.type === 'ImportDeclaration'))
  const last = imports.at(-1)
  if (!last) return line + (wrapped.startsWith('\n') ? '' : '\n') + wrapped
  const end = wrapped.indexOf('\n', last.end)
  const at = end === -1 ? wrapped.length : end + 1
  return wrapped.slice(0, at) + line + wrapped.slice(at)
}

export const next: Framework = {
  id: 'next',
  name: 'Next.js',
  detect: (p) => 'next' in p.deps || p.find(...CONFIGS) !== undefined,
  unsupported: (p) => {
    const v = versionOf(p.deps.next)
    return v !== undefined && (v[0] < MIN_NEXT[0] || (v[0] === MIN_NEXT[0] && v[1] < MIN_NEXT[1]))
      ? `Next.js ${p.deps.next} is older than Next.js ${MIN_NEXT.join('.')}, the oldest init sets up: upgrade Next.js, or add the <script> tag and the marginalia/loader rule by hand (see docs/guide/frameworks.md, "Next.js")`
      : undefined
  },
  devOrigin: 'http://localhost:3000',
  devScript: 'dev',
  startsServer: true,
  setUp(p: Project, plan) {
    const ts = p.find('tsconfig.json') !== undefined
    // next.config: the config wrapped, whatever it already holds (Tailwind's turbopack.rules …).
    const config = p.find(...CONFIGS)
    if (config === undefined) {
      const file = path.join(p.root, ts ? 'next.config.ts' : 'next.config.mjs')
      const body = ts
        ? `import type { NextConfig } from "next";\nimport { withMarginalia } from "marginalia/next";\n\nconst nextConfig: NextConfig = {};\n\nexport default withMarginalia(nextConfig);\n`
        : `import { withMarginalia } from "marginalia/next";\n\n/** @type {import('next').NextConfig} */\nconst nextConfig = {};\n\nexport default withMarginalia(nextConfig);\n`
      plan.change(file, body, 'withMarginalia: source marks and the overlay in `next dev` only')
    } else {
      const next = wrapNextConfig(p.read(config) ?? '', config)
      if (next === null) plan.note(`could not find the exported config in ${path.basename(config)}: wrap it yourself, \`export default withMarginalia(nextConfig)\` with  import { withMarginalia } from 'marginalia/next'`)
      else plan.change(config, next, 'withMarginalia: source marks and the overlay in `next dev` only (your config is kept as it is)')
    }
    // instrumentation-client: beside app/ or pages/ (the project root, or src/ when the app lives there).
    const srcDir = p.find('app', 'pages') === undefined && p.find('src/app', 'src/pages') !== undefined ? 'src' : ''
    const names = ['ts', 'js', 'tsx', 'jsx'].map((e) => path.join(srcDir, `instrumentation-client.${e}`))
    const client = p.find(...names)
    if (client === undefined) plan.change(path.join(p.root, srcDir, `instrumentation-client.${ts ? 'ts' : 'js'}`), `${clientBlock(ts)}${ts ? '\nexport {};\n' : ''}`, 'loads the overlay in `next dev` (runs before the app, in the browser)')
    else {
      const text = p.read(client) ?? ''
      if (!text.includes('MARGINALIA_OVERLAY')) plan.change(client, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${text === '' ? '' : '\n'}${clientBlock(/\.tsx?$/.test(client))}`, 'loads the overlay in `next dev` (your code is kept)')
    }
    plan.note('preview build: `MARGINALIA_SOURCES=ids next build && next start`, then `npx --no-install marginalia serve --sources marginalia-sources.json` (a plain `next build` has no marks and no overlay)')
  },
}
