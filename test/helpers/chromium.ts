/**
 * Debian's Chromium, driven by playwright-core. Never a downloaded browser: the path is
 * /usr/bin/chromium (`apt-get install chromium`; .ci/run installs it) or MARGINALIA_CHROMIUM.
 */
import { existsSync } from 'node:fs'
import { afterAll, beforeAll } from 'vitest'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core'
import { useCleanups, type Cleanups } from './cleanup.js'

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
]

/** The Chromium executable, or undefined when there is none. */
export function chromiumPath(): string | undefined {
  const candidate = process.env.MARGINALIA_CHROMIUM || '/usr/bin/chromium'
  return existsSync(candidate) ? candidate : undefined
}

/**
 * Whether browser tests can run here. Locally, a machine without Chromium skips them (with a
 * message saying how to get it); in CI (CI=true) a missing Chromium is an error, never a skip.
 */
export function browserTestsEnabled(): boolean {
  if (chromiumPath()) return true
  const message = 'browser tests need Chromium at /usr/bin/chromium (apt-get install -y chromium) or MARGINALIA_CHROMIUM'
  if (process.env.CI) throw new Error(`${message}; CI must install it (.ci/run does)`)
  process.stderr.write(`\n[skipped] ${message}\n`)
  return false
}

/**
 * Launch headless Chromium. Playwright gives it a fresh temporary --user-data-dir and removes it
 * when the browser closes; every test opens its own context (fresh storage).
 */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  const executablePath = chromiumPath()
  if (!executablePath) throw new Error('no Chromium: apt-get install -y chromium')
  return chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs], timeout: 30_000 })
}

export interface ChromiumSuite {
  /** Whether the file's browser tests run (see {@link browserTestsEnabled}). */
  readonly enabled: boolean
  /** The file's browser, launched once before its tests. */
  readonly browser: Browser
  /** Run after each test, newest first: pages, servers, stores the test opened. */
  readonly cleanups: Cleanups
  /** A fresh context (its own storage; default viewport 1024 × 700) and a page in it, closed after the test. */
  newPage(options?: BrowserContextOptions): Promise<{ context: BrowserContext; page: Page }>
}

/**
 * The hooks every browser test file needs: one Chromium for the file (closed after it), and
 * per-test cleanups run after each test. Call it at the top level of the test file.
 */
export function useChromium(options: { args?: readonly string[] } = {}): ChromiumSuite {
  const enabled = browserTestsEnabled()
  const cleanups = useCleanups()
  let browser: Browser | undefined
  beforeAll(async () => {
    if (enabled) browser = await launchChromium(options.args)
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
  })
  const suite: ChromiumSuite = {
    enabled,
    cleanups,
    get browser(): Browser {
      if (!browser) throw new Error('Chromium is not running: use the browser inside a test of a describe.skipIf(!enabled) block')
      return browser
    },
    async newPage(contextOptions = { viewport: { width: 1024, height: 700 } }) {
      const context = await suite.browser.newContext(contextOptions)
      cleanups.push(() => context.close())
      return { context, page: await context.newPage() }
    },
  }
  return suite
}
