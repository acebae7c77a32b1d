/**
 * Any other set-up — plain HTML, and server-rendered apps init does not recognise (PHP, Go,
 * Phoenix …; Rails, Django and Laravel have their own module, server-rendered.ts):
 * `marginalia serve` beside the app, and the head snippet first in the page's <head>, in
 * development only (the snippet is printed; where the layout lives is the app's own business).
 */
import { projectHeadSnippet, SERVE_COMMAND } from './head-snippet.js'
import type { Framework } from './types.js'

export const scriptTag: Framework = {
  id: 'other',
  name: 'another set-up',
  detect: () => true,
  devOrigin: 'http://localhost:5173',
  devScript: 'dev',
  startsServer: false,
  setUp(_p, plan) {
    plan.note(
      [
        `no build plugin for this set-up: run \`${SERVE_COMMAND}\` beside your dev server, and paste this first in your layout's <head>, in development only`,
        '(wrapped in your templates\' development-only condition; see docs/guide/frameworks.md):',
        projectHeadSnippet(),
      ].join('\n'),
    )
  },
}
