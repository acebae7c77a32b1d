/**
 * Freeze the page: the toolbar's ❄ pauses CSS animations, CSS transitions, Web
 * Animations and media, so a person can annotate a toast or a hover state; what starts while
 * frozen is paused as it starts; unfreezing resumes them. The overlay's own animations go on.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { setup, ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Motion</title>
<style>
  @keyframes spin { to { transform: rotate(360deg) } }
  #spinner { width: 40px; height: 40px; background: teal; animation: spin 4s linear infinite }
  .grow { width: 50px; height: 30px; background: tomato; margin: 10px 0; transition: width 20s linear }
  .grow.wide { width: 600px }
</style></head>
<body style="margin:0;padding:40px;font:14px sans-serif">
<div id="spinner"></div><div id="bar" class="grow"></div><div id="later" class="grow"></div><div id="waapi" style="width:40px;height:40px;background:navy"></div>
<script>
  document.getElementById('waapi').animate([{ opacity: 1 }, { opacity: 0 }], { duration: 10000, iterations: Infinity })
  // A second of silence, looped: media to pause.
  const rate = 8000, n = rate, buf = new ArrayBuffer(44 + n), v = new DataView(buf)
  const s = (o, t) => [...t].forEach((c, i) => v.setUint8(o + i, c.charCodeAt(0)))
  s(0, 'RIFF'); v.setUint32(4, 36 + n, true); s(8, 'WAVEfmt '); v.setUint32(16, 16, true); v.setUint16(20, 1, true); v.setUint16(22, 1, true)
  v.setUint32(24, rate, true); v.setUint32(28, rate, true); v.setUint16(32, 1, true); v.setUint16(34, 8, true); s(36, 'data'); v.setUint32(40, n, true)
  for (let i = 0; i < n; i++) v.setUint8(44 + i, 128)
  const audio = Object.assign(document.createElement('audio'), { src: URL.createObjectURL(new Blob([buf], { type: 'audio/wav' })), loop: true, muted: true, id: 'sound' })
  document.body.append(audio)
</script>
{{overlay}}</body></html>`

/** The page's animations (not the overlay's): id of the element → currentTime. */
function times(page: Page): Promise<Record<string, number>> {
  return page.evaluate(() => {
    const out: Record<string, number> = {}
    for (const a of document.getAnimations()) {
      const target = (a.effect as KeyframeEffect | null)?.target
      if (target instanceof Element && target.id) out[target.id] = Number(a.currentTime)
    }
    return out
  })
}

/** Whether every animation of the page (not the overlay's) has settled into the paused state. */
function allPaused(page: Page): () => Promise<boolean> {
  return () =>
    page.evaluate(() =>
      document.getAnimations().every((a) => {
        const target = (a.effect as KeyframeEffect | null)?.target
        return !(target instanceof Element && target.id) || (a.playState === 'paused' && !a.pending)
      }),
    )
}

/** Let `ms` of page time pass (a condition on the page's clock, not a sleep in the test). */
async function pass(page: Page, ms: number): Promise<void> {
  const t0 = await page.evaluate(() => performance.now())
  await page.waitForFunction((end) => performance.now() > end, t0 + ms)
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))
}

describe.skipIf(!enabled)('freeze the page', () => {
  it('pauses CSS animations, transitions, Web Animations and media while frozen, and resumes them', { timeout: 90_000 }, async () => {
    const { page } = await setup(chromium.browser, cleanups, { '/motion': PAGE }, '/motion')
    await page.evaluate(() => (document.getElementById('sound') as HTMLAudioElement).play())
    await page.evaluate(() => document.getElementById('bar')!.classList.add('wide'))
    await eventually(async () => Object.keys(await times(page)).sort()).toEqual(['bar', 'spinner', 'waapi'])
    await pass(page, 100)

    await ui(page, '.freeze-btn').click()
    // The freezer comes with annotate mode's chunk: the first press fetches it, then freezes.
    await eventually(() => ui(page, '.freeze-btn').getAttribute('aria-pressed')).toBe('true')
    // pause() settles on the next frame: read the times once every page animation says paused.
    await eventually(allPaused(page)).toBe(true)
    const frozen = await times(page)
    const width = await page.locator('#bar').evaluate((el) => el.getBoundingClientRect().width)
    expect(await page.evaluate(() => (document.getElementById('sound') as HTMLAudioElement).paused)).toBe(true)
    // A transition that starts while frozen (a hover, a class) is paused as it starts.
    await page.evaluate(() => document.getElementById('later')!.classList.add('wide'))
    await eventually(async () => 'later' in (await times(page))).toBe(true)
    await eventually(allPaused(page)).toBe(true)
    const later = (await times(page)).later
    await pass(page, 400)
    const still = await times(page)
    expect(still.spinner).toBe(frozen.spinner)
    expect(still.bar).toBe(frozen.bar)
    expect(still.waapi).toBe(frozen.waapi)
    expect(still.later).toBe(later)
    expect(await page.locator('#bar').evaluate((el) => el.getBoundingClientRect().width)).toBe(width)
    await page.screenshot({ path: 'test/browser/overlay-ui/.screenshots/frozen.png' })

    await ui(page, '.freeze-btn').click()
    expect(await ui(page, '.freeze-btn').getAttribute('aria-pressed')).toBe('false')
    await pass(page, 200)
    const after = await times(page)
    expect(after.spinner).toBeGreaterThan(frozen.spinner!)
    expect(after.bar).toBeGreaterThan(frozen.bar!)
    expect(after.waapi).toBeGreaterThan(frozen.waapi!)
    expect(after.later).toBeGreaterThan(later!)
    expect(await page.evaluate(() => (document.getElementById('sound') as HTMLAudioElement).paused)).toBe(false)
  })
})
