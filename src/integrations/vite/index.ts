/**
 * `marginalia/vite`: one line in vite.config — `plugins: [marginalia()]` — and every page the dev
 * server serves carries the overlay. The plugin itself is `plugin.ts`; the server it starts is
 * `servers.ts` (in a worker thread, `worker.ts`, or in-process, `start.ts`).
 */
export { default, marginalia, type MarginaliaViteOptions, type MarginaliaVitePlugin, type MarginaliaViteState } from './plugin.js'
