// Build the browser extension from the overlay's sources (src/browser/extension, src/browser/overlay):
//   dist/extension/chromium/  — unpacked, Manifest V3 with a service worker (load it in chrome://extensions)
//   dist/extension/firefox/   — unpacked, Manifest V3 with background scripts (about:debugging), Firefox 140+
//   dist/extension/marginalia-<browser>-<version>.zip — each zipped by web-ext (the stores take these)
// The scripts are esbuild IIFE bundles like overlay.js: page.js runs in the page's own world,
// relay.js in the extension's isolated world, background.js is the service worker.
import { build, transform } from 'esbuild'
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { deflateSync } from 'node:zlib'
import webExt from 'web-ext'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const src = path.join(root, 'src/browser/extension')
const out = path.join(root, 'dist', 'extension')
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))

/**
 * The public half of the extension's signing key: with it the unpacked Chromium build has the
 * same ID everywhere (chrome-extension://fkdilionbgjppppfmpgbfakpiamkedhg), the origin a team
 * server allows with --allow-origin. Only the public key is here; nothing is signed with it.
 */
const CHROMIUM_KEY =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAx9FRrCuKuQ/plc8jifI5uY3aXFNvQi3R/guHu3XDa0TtwMfBTconDo+waFlEZfn5HS420ZzRFOLx0hKNAf7FcJ8osxDIHitBU9lYAkhv2inNhQ/qXsIoFqwqqMZ1AaHGh8sZ/6Ri5B+p9OVB6RnMJFcIX8H7cVWx7yOBvS740axei92rAbduKIRZjUVObLP29/aQe/acRWPN1lxNMAM4JdOy+e71VLbM3tUBr+BHB7u69sx29YXMmpKFfAE7lh2rsVXZi7nRQ5g8qfbADHpMYQ5klmpHxVl2jA4pnwI4sanuHDx9FXiORWZRb665KZoi9TLD1jJhtXZCFsOxxIsr9QIDAQAB'
const GECKO_ID = 'extension@marginalia.dev'
const TARGET = { chromium: ['chrome111'], firefox: ['firefox140'] }

const minifiedCss = {
  name: 'minified-css-text',
  setup(b) {
    b.onLoad({ filter: /\.css$/ }, async (args) => {
      const { code } = await transform(readFileSync(args.path, 'utf8'), { loader: 'css', minify: true })
      return { contents: `export default ${JSON.stringify(code.trim())}`, loader: 'js' }
    })
  },
}

/** The manifest of one browser's build: the same permissions, each browser's own background and extras. */
export function manifest(browser) {
  const common = {
    manifest_version: 3,
    name: 'Marginalia',
    version: version.replace(/[-+].*$/, ''),
    description: 'Annotate any web page for your AI coding agent: point at an element, say what is wrong, and the agent sees it through your Marginalia server.',
    permissions: ['storage', 'scripting', 'activeTab'],
    // Asked for one site at a time, when the person turns the overlay on for it; never all sites up front.
    optional_host_permissions: ['http://*/*', 'https://*/*'],
    icons: Object.fromEntries(ICON_SIZES.map((n) => [String(n), `icons/${n}.png`])),
    action: { default_title: 'Marginalia', default_popup: 'popup.html', default_icon: Object.fromEntries(ICON_SIZES.filter((n) => n <= 32).map((n) => [String(n), `icons/${n}.png`])) },
    options_ui: { page: 'options.html', open_in_tab: true },
  }
  if (browser === 'chromium') {
    return { ...common, key: CHROMIUM_KEY, minimum_chrome_version: '111', background: { service_worker: 'background.js' }, storage: { managed_schema: 'managed_schema.json' } }
  }
  return {
    ...common,
    background: { scripts: ['background.js'] },
    // 140: the first Firefox (an ESR) that reads data_collection_permissions; what is sent is the page's content, to the person's own server.
    browser_specific_settings: { gecko: { id: GECKO_ID, strict_min_version: '140.0', data_collection_permissions: { required: ['websiteContent'] } }, gecko_android: { strict_min_version: '142.0' } },
  }
}

const ICON_SIZES = [16, 32, 48, 128]

/**
 * The icon, drawn here rather than kept as binary files: a pin (a white disc with a point) on a
 * blue rounded square, 4 × 4 samples a pixel for smooth edges, written as an RGBA PNG.
 */
function icon(size) {
  const inside = (x, y) => {
    // Coordinates in 0..1. The rounded square.
    const r = 0.2
    const dx = Math.max(r - x, 0, x - (1 - r))
    const dy = Math.max(r - y, 0, y - (1 - r))
    if (dx * dx + dy * dy > r * r) return 0
    // The pin: a disc and the triangle under it.
    const cx = 0.5
    const cy = 0.42
    const disc = (x - cx) ** 2 + (y - cy) ** 2 <= 0.24 ** 2
    const tail = y >= cy && y <= 0.86 && Math.abs(x - cx) <= 0.2 * (1 - (y - cy) / (0.86 - cy))
    const hole = (x - cx) ** 2 + (y - cy) ** 2 <= 0.09 ** 2
    return (disc || tail) && !hole ? 2 : 1
  }
  const rows = []
  for (let py = 0; py < size; py++) {
    const row = Buffer.alloc(1 + size * 4)
    for (let px = 0; px < size; px++) {
      let blue = 0
      let white = 0
      for (let sy = 0; sy < 4; sy++) {
        for (let sx = 0; sx < 4; sx++) {
          const v = inside((px + (sx + 0.5) / 4) / size, (py + (sy + 0.5) / 4) / size)
          if (v === 1) blue++
          else if (v === 2) white++
        }
      }
      const covered = blue + white
      const o = 1 + px * 4
      if (covered === 0) continue
      // Blue #2563eb mixed with white by their share of the samples.
      const w = white / covered
      row[o] = Math.round(0x25 + (255 - 0x25) * w)
      row[o + 1] = Math.round(0x63 + (255 - 0x63) * w)
      row[o + 2] = Math.round(0xeb + (255 - 0xeb) * w)
      row[o + 3] = Math.round((covered / 16) * 255)
    }
    rows.push(row)
  }
  const chunk = (type, data) => {
    const head = Buffer.alloc(8)
    head.writeUInt32BE(data.length)
    head.write(type, 4, 'ascii')
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])))
    return Buffer.concat([head, data, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(size, 0)
  ihdr.writeUInt32BE(size, 4)
  ihdr[8] = 8 // bits per channel
  ihdr[9] = 6 // RGBA
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))])
}

function crc32(bytes) {
  let c = ~0
  for (const b of bytes) {
    c ^= b
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1))
  }
  return ~c >>> 0
}

/** What an organisation may preset (Chromium's managed storage; Firefox reads the same keys from its policies). */
const MANAGED_SCHEMA = {
  type: 'object',
  properties: {
    server: { title: 'Marginalia server', description: 'The server URL, e.g. https://marginalia.example.com (a person cannot change it).', type: 'string' },
    sites: { title: 'Sites', description: 'Origins where the overlay is always on, e.g. https://staging.example.com.', type: 'array', items: { type: 'string' } },
    maskInputs: { title: 'Mask typed values', description: 'true: no typed value in the steps to reproduce on any site; false: typed values kept (never passwords or masked fields). Unset: masked except on local dev origins.', type: 'boolean' },
  },
}

async function buildOne(browser) {
  const dir = path.join(out, browser)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  await build({
    entryPoints: ['background', 'relay', 'page', 'popup', 'options'].map((name) => ({ in: path.join(src, `${name}.ts`), out: name })),
    outdir: dir,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: TARGET[browser],
    tsconfig: path.join(root, 'tsconfig.overlay.json'),
    minify: true,
    legalComments: 'none',
    define: { __MARGINALIA_VERSION__: JSON.stringify(version), __MARGINALIA_BROWSER__: JSON.stringify(browser) },
    banner: { js: `/* Marginalia extension ${version} */` },
    plugins: [minifiedCss],
    logLevel: 'warning',
  })
  for (const file of ['popup.html', 'options.html', 'extension.css']) copyFileSync(path.join(src, file), path.join(dir, file))
  mkdirSync(path.join(dir, 'icons'))
  for (const n of ICON_SIZES) writeFileSync(path.join(dir, 'icons', `${n}.png`), icon(n))
  writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest(browser), null, 2)}\n`)
  if (browser === 'chromium') writeFileSync(path.join(dir, 'managed_schema.json'), `${JSON.stringify(MANAGED_SCHEMA, null, 2)}\n`)
  await webExt.cmd.build({ sourceDir: dir, artifactsDir: out, filename: `marginalia-${browser}-${version}.zip`, overwriteDest: true }, { shouldExitProgram: false, showReadyMessage: false })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const browser of ['chromium', 'firefox']) await buildOne(browser)
}
