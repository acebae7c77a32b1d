/** SvelteKit: the Vite plugin in vite.config.* beside sveltekit() (its pages get the overlay from the plugin's page middleware). */
import type { Framework } from './types.js'
import { vite } from './vite.js'

export const sveltekit: Framework = {
  id: 'sveltekit',
  name: 'SvelteKit',
  detect: (p) => '@sveltejs/kit' in p.deps,
  unsupported: (p) => vite.unsupported?.(p),
  devOrigin: 'http://localhost:5173',
  devScript: 'dev',
  startsServer: true,
  setUp: (p, plan) => vite.setUp(p, plan),
}
