/** Any other set-up (server-rendered apps, plain HTML): `marginalia serve` and the script tag. */
import { DEFAULT_PORT } from '../../http/defaults.js'
import type { Framework } from './types.js'

const SCRIPT_TAG = `<script src="http://127.0.0.1:${DEFAULT_PORT}/overlay.js" defer data-marginalia></script>`

export const scriptTag: Framework = {
  id: 'other',
  name: 'another set-up',
  detect: () => true,
  devOrigin: 'http://localhost:5173',
  devScript: 'dev',
  startsServer: false,
  setUp(_p, plan) {
    plan.note(`no supported framework found here: run \`npx --no-install marginalia serve\` beside your dev server and paste into your page, in development only: ${SCRIPT_TAG}`)
  },
}
