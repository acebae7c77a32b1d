/**
 * React Router 7 in framework mode (`@react-router/dev`, `react-router dev`): a Vite app whose pages
 * are rendered on the server. The Vite plugin goes first in vite.config's plugins; it puts the
 * overlay into the server-rendered HTML in dev and marks the route modules like any JSX.
 */
import type { Framework } from './types.js'
import { vite } from './vite.js'

/** The major version a semver range starts from (`^7.1.0` → 7), or undefined. */
function majorOf(range: string | undefined): number | undefined {
  const m = range === undefined ? null : /^\D*(\d+)/.exec(range)
  return m ? Number(m[1]) : undefined
}

export const reactRouter: Framework = {
  id: 'react-router',
  name: 'React Router (framework mode)',
  detect: (p) => '@react-router/dev' in p.deps || p.find('react-router.config.ts', 'react-router.config.js', 'react-router.config.mjs') !== undefined,
  unsupported: (p) => {
    const major = majorOf(p.deps['@react-router/dev'])
    if (major !== undefined && major < 7) return `@react-router/dev ${p.deps['@react-router/dev']} is older than React Router 7, the first with framework mode on Vite: upgrade it, or use the <script> tag with \`marginalia serve\` (see docs/guide/frameworks.md)`
    return vite.unsupported?.(p)
  },
  devOrigin: 'http://localhost:5173',
  devScript: 'dev',
  startsServer: true,
  setUp: (p, plan) => vite.setUp(p, plan),
}
