/**
 * Server-rendered apps whose pages come from templates — Rails, Django, Laravel: no build plugin
 * reaches their HTML, so `init` prints the head snippet wrapped in the template's own
 * development-only condition, says which layout it goes in, and `doctor` checks the overlay from
 * the framework's dev server. Listed before Vite: such an app may build its assets with Vite
 * (vite_rails, laravel-vite-plugin), but Vite never serves its pages.
 */
import { projectHeadSnippet, SERVE_COMMAND } from './head-snippet.js'
import type { Framework, Project } from './types.js'

interface Template {
  id: string
  name: string
  detect(p: Project): boolean
  devOrigin: string
  devCommand: string
  /** Where the snippet goes. */
  layout: string
  /** The template's development-only condition around the snippet. */
  open: string
  close: string
}

function serverRendered(t: Template): Framework {
  return {
    id: t.id,
    name: t.name,
    detect: t.detect,
    devOrigin: t.devOrigin,
    devScript: 'dev',
    devCommand: t.devCommand,
    startsServer: false,
    setUp(_p, plan) {
      plan.note([`run \`${SERVE_COMMAND}\` beside \`${t.devCommand}\`, and paste this first in the <head> of ${t.layout} (development only; see docs/guide/frameworks.md):`, t.open, projectHeadSnippet(), t.close].join('\n'))
    },
  }
}

export const rails = serverRendered({
  id: 'rails',
  name: 'Ruby on Rails',
  detect: (p) => p.find('bin/rails', 'config/application.rb') !== undefined && /\brails\b/.test(p.read('Gemfile') ?? ''),
  devOrigin: 'http://localhost:3000',
  devCommand: 'bin/rails server',
  layout: 'app/views/layouts/application.html.erb',
  open: '<% if Rails.env.development? %>',
  close: '<% end %>',
})

export const django = serverRendered({
  id: 'django',
  name: 'Django',
  detect: (p) => p.find('manage.py') !== undefined,
  devOrigin: 'http://localhost:8000',
  devCommand: 'python manage.py runserver',
  layout: 'your base template (e.g. templates/base.html; `debug` needs DEBUG = True and your address in INTERNAL_IPS)',
  open: '{% if debug %}',
  close: '{% endif %}',
})

export const laravel = serverRendered({
  id: 'laravel',
  name: 'Laravel',
  detect: (p) => p.find('artisan') !== undefined && p.find('composer.json') !== undefined,
  devOrigin: 'http://localhost:8000',
  devCommand: 'php artisan serve',
  layout: 'your layout (e.g. resources/views/layouts/app.blade.php)',
  open: "@env('local')",
  close: '@endenv',
})
