/**
 * Any other set-up — server-rendered apps (Rails, Django, Laravel …) and plain HTML:
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
        '(Rails: `<% if Rails.env.development? %>` in app/views/layouts/application.html.erb; Django: `{% if debug %}` in your base template; Laravel: `@env(\'local\')` in your layout; see docs/guide/frameworks.md):',
        projectHeadSnippet(),
      ].join('\n'),
    )
  },
}
