/** `marginalia extension`: where the built browser extension is, and how to load it in Chromium and Firefox. */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { PACKAGE_ROOT, VERSION } from '../version.js'
import type { Command, Values } from './command.js'

/** The unpacked Chromium build's ID, fixed by the public key in its manifest (scripts/build-extension.mjs). */
export const CHROMIUM_EXTENSION_ID = 'fkdilionbgjppppfmpgbfakpiamkedhg'

export const extension: Command = {
  oneShot: true,
  summary: 'Where the browser extension (Chromium, Firefox) is and how to load it: annotate any site',
  usage: [
    'marginalia extension [--json]',
    '',
    'Prints where `npm run build` put the browser extension — unpacked folders and a zip for',
    'Chromium (Chrome, Edge, Brave) and Firefox (140 or later) — and how to load each. With it a',
    'person annotates any site (staging, production) without a change to the site: turn it on for',
    'the site from its toolbar button, and it talks to your server through the extension.',
    '',
    'A server accepts the extension only when told its exact origin:',
    `  marginalia serve --allow-origin chrome-extension://${CHROMIUM_EXTENSION_ID}`,
    "Firefox gives the extension another origin in every profile: its options page shows it.",
    '',
    'Options:',
    '      --json   the same as JSON: { version, chromium, firefox } with paths and origins',
  ].join('\n'),
  options: { json: { type: 'boolean' } },
  run,
}

async function run(values: Values): Promise<void> {
  const dir = path.join(PACKAGE_ROOT, 'dist', 'extension')
  const build = (browser: 'chromium' | 'firefox') => ({ unpacked: path.join(dir, browser), zip: path.join(dir, `marginalia-${browser}-${VERSION}.zip`) })
  const chromium = { ...build('chromium'), origin: `chrome-extension://${CHROMIUM_EXTENSION_ID}` }
  const firefox = { ...build('firefox'), origin: 'moz-extension://<a uuid per profile: see the options page>' }
  const built = existsSync(path.join(chromium.unpacked, 'manifest.json')) && existsSync(path.join(firefox.unpacked, 'manifest.json'))
  if (!built) {
    process.exitCode = 1
    process.stderr.write(`marginalia: the extension is not built in ${dir}: run npm run build in ${PACKAGE_ROOT}\n`)
    return
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ version: VERSION, chromium, firefox, stores: null }, null, 2)}\n`)
    return
  }
  process.stdout.write(
    [
      `Marginalia browser extension ${VERSION} (Manifest V3)`,
      '',
      'Chromium (Chrome, Edge, Brave):',
      `  unpacked  ${chromium.unpacked}`,
      `  zip       ${chromium.zip}`,
      '  Load it:  chrome://extensions → Developer mode → Load unpacked → the unpacked folder.',
      `  Origin:   ${chromium.origin}`,
      '',
      'Firefox (140 or later):',
      `  unpacked  ${firefox.unpacked}`,
      `  zip       ${firefox.zip}`,
      '  Load it:  about:debugging#/runtime/this-firefox → Load Temporary Add-on → manifest.json in the unpacked folder.',
      '  Origin:   one per profile (moz-extension://<uuid>): the options page shows it.',
      '',
      'Then:',
      '  1. Start your server and let the extension in:',
      `       marginalia serve --allow-origin ${chromium.origin}`,
      '     (a team server: add the same flag; people sign in from the extension\'s options page).',
      '  2. On the site to annotate, click the Marginalia toolbar button → "Off" turns it on (the browser asks for that site only).',
      '  3. The options page sets the server (default http://127.0.0.1:4848) and the sites; an organisation can preset both (managed storage).',
      '',
      'Store listings: not yet listed in the Chrome Web Store or on addons.mozilla.org.',
      '',
    ].join('\n'),
  )
}
