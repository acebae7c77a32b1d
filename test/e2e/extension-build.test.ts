/**
 * What `npm run build` makes of the browser extension: two Manifest V3 builds that ask for no site
 * up front and inject nothing by themselves, each zipped beside its folder; the Firefox build
 * passes `web-ext lint` (Mozilla's linter, from npm); `marginalia extension` says where they are.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { CHROMIUM_EXTENSION_ID } from '../../src/cli/extension.js'
import { VERSION } from '../../src/version.js'
import { runCli } from '../helpers/cli.js'

const root = path.resolve(import.meta.dirname, '../..')
const dist = path.join(root, 'dist/extension')
const read = (browser: string) => JSON.parse(readFileSync(path.join(dist, browser, 'manifest.json'), 'utf8')) as Record<string, unknown> & { background: Record<string, unknown>; browser_specific_settings?: { gecko?: Record<string, unknown> } }

/** The ID Chromium gives an unpacked extension with this manifest key: SHA-256 of the key, 32 hex digits as the letters a–p. */
function idOf(key: string): string {
  const hex = createHash('sha256').update(Buffer.from(key, 'base64')).digest('hex').slice(0, 32)
  return [...hex].map((c) => String.fromCharCode(97 + parseInt(c, 16))).join('')
}

describe('the browser extension build', () => {
  it('both builds: Manifest V3, storage/scripting/activeTab, sites only as optional host permissions, no content script of their own', () => {
    for (const browser of ['chromium', 'firefox']) {
      const m = read(browser)
      expect(m.manifest_version, browser).toBe(3)
      expect(m.permissions).toEqual(['storage', 'scripting', 'activeTab'])
      expect(m.host_permissions, 'never a site up front').toBeUndefined()
      expect(m.optional_host_permissions).toEqual(['http://*/*', 'https://*/*'])
      expect(m.content_scripts, 'pages get scripts only once listed').toBeUndefined()
      expect(m.action).toMatchObject({ default_popup: 'popup.html' })
      expect(m.options_ui).toMatchObject({ page: 'options.html' })
      for (const file of ['background.js', 'page.js', 'relay.js', 'popup.js', 'options.js', 'popup.html', 'options.html', 'extension.css']) expect(existsSync(path.join(dist, browser, file)), `${browser}/${file}`).toBe(true)
      // The icons, drawn by the build: real PNGs of their size.
      for (const [n, file] of Object.entries(m.icons as Record<string, string>)) {
        const png = readFileSync(path.join(dist, browser, file))
        expect(png.subarray(1, 4).toString('latin1'), file).toBe('PNG')
        expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([Number(n), Number(n)])
      }
      expect(Object.keys(m.icons as object)).toEqual(['16', '32', '48', '128'])
      const zip = readFileSync(path.join(dist, `marginalia-${browser}-${VERSION}.zip`))
      expect(zip.subarray(0, 4).toString('hex')).toBe('504b0304')
      for (const file of ['manifest.json', 'page.js', 'background.js']) expect(zip.includes(Buffer.from(file)), `${file} in the ${browser} zip`).toBe(true)
    }
  })

  it('Chromium: a service worker, a key that fixes the ID the CLI and the docs name, and the managed-storage schema of server, sites and maskInputs', () => {
    const m = read('chromium')
    expect(m.background).toEqual({ service_worker: 'background.js' })
    expect(idOf(m.key as string)).toBe(CHROMIUM_EXTENSION_ID)
    expect(m.storage).toEqual({ managed_schema: 'managed_schema.json' })
    const schema = JSON.parse(readFileSync(path.join(dist, 'chromium/managed_schema.json'), 'utf8')) as { properties: Record<string, { type: string }> }
    expect(Object.keys(schema.properties)).toEqual(['server', 'sites', 'maskInputs'])
    expect(schema.properties.sites!.type).toBe('array')
  })

  it('Firefox: background scripts (no service worker), a gecko id and minimum version, no Chromium-only keys', () => {
    const m = read('firefox')
    expect(m.background).toEqual({ scripts: ['background.js'] })
    expect(m.browser_specific_settings?.gecko).toMatchObject({ id: 'extension@marginalia.dev', strict_min_version: '140.0', data_collection_permissions: { required: ['websiteContent'] } })
    expect(m.key).toBeUndefined()
    expect(m.storage).toBeUndefined()
  })

  it('Firefox: web-ext lint finds no error; the one warning is modern-screenshot copying SVG <use> definitions', { timeout: 60_000 }, async () => {
    const bin = path.join(root, 'node_modules/.bin/web-ext')
    const { stdout } = await promisify(execFile)(bin, ['lint', '--source-dir', path.join(dist, 'firefox'), '--output', 'json', '--no-config-discovery'], { cwd: tmpdir(), timeout: 55_000 }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }))
    const report = JSON.parse(stdout) as { errors: unknown[]; warnings: { code: string; file: string }[]; notices: unknown[] }
    expect(report.errors).toEqual([])
    expect(report.warnings.map((w) => `${w.code} ${w.file}`)).toEqual(['UNSAFE_VAR_ASSIGNMENT page.js'])
  })

  it('marginalia extension prints the folders, the zips, how to load each and the origin a server lets in', async () => {
    const json = await runCli(['extension', '--json'], tmpdir())
    expect(json.code).toBe(0)
    const parsed = JSON.parse(json.stdout) as { chromium: { unpacked: string; zip: string; origin: string }; firefox: { unpacked: string; zip: string } }
    expect(parsed.chromium).toEqual({ unpacked: path.join(dist, 'chromium'), zip: path.join(dist, `marginalia-chromium-${VERSION}.zip`), origin: `chrome-extension://${CHROMIUM_EXTENSION_ID}` })
    expect(parsed.firefox.unpacked).toBe(path.join(dist, 'firefox'))
    const text = await runCli(['extension'], tmpdir())
    expect(text.code).toBe(0)
    expect(text.stdout).toContain('chrome://extensions')
    expect(text.stdout).toContain('about:debugging')
    expect(text.stdout).toContain(`marginalia serve --allow-origin chrome-extension://${CHROMIUM_EXTENSION_ID}`)
  })
})
