/** Preact on Vite (`@preact/preset-vite`, create-vite's preact templates): the Vite plugin, which marks Preact's JSX too. */
import type { Framework } from './types.js'
import { vite } from './vite.js'

export const preact: Framework = {
  id: 'preact',
  name: 'Preact',
  detect: (p) => '@preact/preset-vite' in p.deps,
  unsupported: (p) => vite.unsupported?.(p),
  devOrigin: 'http://localhost:5173',
  devScript: 'dev',
  startsServer: true,
  setUp: (p, plan) => vite.setUp(p, plan),
}
