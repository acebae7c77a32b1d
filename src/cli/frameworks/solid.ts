/** Solid on Vite (`vite-plugin-solid`, create-vite's solid templates): the Vite plugin, which marks Solid's JSX too. */
import type { Framework } from './types.js'
import { vite } from './vite.js'

export const solid: Framework = {
  id: 'solid',
  name: 'Solid',
  detect: (p) => 'vite-plugin-solid' in p.deps && !('@solidjs/start' in p.deps),
  unsupported: (p) => vite.unsupported?.(p),
  devOrigin: 'http://localhost:5173',
  devScript: 'dev',
  startsServer: true,
  setUp: (p, plan) => vite.setUp(p, plan),
}
