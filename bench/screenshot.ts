/**
 * Element screenshot time in Chromium: the overlay's capture (src/browser/overlay/capture),
 * bundled as it ships, on a typical product card of a page with text, a button and some CSS.
 * Skipped (undefined) when there is no Chromium.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { build } from 'esbuild'
import { chromium } from 'playwright-core'
import { ROOT, median, percentile } from './lib.js'

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><style>
body { margin: 0; padding: 24px; font: 15px system-ui, sans-serif; background: #f6f7f9; }
.grid { display: grid; grid-template-columns: repeat(3, 260px); gap: 16px; }
.card { background: #fff; border: 1px solid #dde; border-radius: 10px; padding: 16px; box-shadow: 0 2px 6px rgba(0,0,0,.08); }
.card h2 { margin: 0 0 8px; font-size: 18px; } .card p { color: #555; } .card button { background: #4f46e5; color: #fff; border: 0; border-radius: 6px; padding: 8px 14px; }
</style></head><body><h1>Shop</h1><div class="grid">${Array.from({ length: 9 }, (_, i) => `<div class="card" id="c${i}"><h2>Plant ${i}</h2><p>A hardy plant for a bright room. Water weekly; repot in spring.</p><button>Buy · $${10 + i}</button></div>`).join('')}</div>${'<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>'.repeat(30)}</body></html>`

export async function screenshotTimes(runs: number): Promise<{ p50: number; p95: number; bytes: number } | undefined> {
  const executablePath = process.env.MARGINALIA_CHROMIUM || '/usr/bin/chromium'
  if (!existsSync(executablePath)) return undefined
  const bundle = await build({
    stdin: { contents: "import { captureBox } from './screenshot.js'; (window as any).__capture = captureBox", resolveDir: path.join(ROOT, 'src/browser/overlay/capture'), loader: 'ts' },
    bundle: true,
    format: 'iife',
    minify: true,
    write: false,
  })
  const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    await page.setContent(PAGE)
    await page.addScriptTag({ content: bundle.outputFiles[0]!.text })
    const times: number[] = []
    let bytes = 0
    for (let i = 0; i < runs + 1; i++) {
      // A string, not a function: this file is compiled without DOM types.
      const r = (await page.evaluate(`(async () => {
        const el = document.getElementById('c${i % 9}')
        const t0 = performance.now()
        const blob = await window.__capture(el.getBoundingClientRect())
        return { ms: performance.now() - t0, bytes: blob ? blob.size : 0 }
      })()`)) as { ms: number; bytes: number }
      if (i > 0) times.push(r.ms) // the first run warms up (fonts, the library's caches)
      bytes = r.bytes
    }
    return { p50: median(times), p95: percentile(times, 95), bytes }
  } finally {
    await browser.close()
  }
}
