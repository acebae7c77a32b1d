/**
 * What a crafted store file holds is shown, never followed: a session and an annotation whose
 * page URL is `javascript:` (the store's inputs refuse it, a file written by hand does not) are
 * listed in the inbox as text, with no link, and clicking them runs nothing. Real Chromium.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openStore } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { startMarginalia } from '../../helpers/page.js'
import { testDir } from '../../helpers/store.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const PLANTED = 'https://planted.invalid/page'
const SCRIPT_URL = 'javascript:document.title="ran"'

describe.skipIf(!enabled)('a crafted store in the inbox', () => {
  it('shows a javascript: page URL as text, never as a link', { timeout: 60_000 }, async () => {
    const tmp = testDir(cleanups)
    const first = await openStore({ file: tmp.file })
    const session = await first.createSession({ url: PLANTED, name: 'Crafted' })
    await first.addAnnotation({ sessionId: session.id, comment: 'Look here', url: PLANTED })
    await first.close()
    // Rewrite the URL in whatever the store wrote (the log and the snapshot), as a hostile file would.
    for (const name of ['store.events.jsonl', 'store.json']) {
      const file = path.join(path.dirname(tmp.file), name)
      let text: string
      try {
        text = readFileSync(file, 'utf8')
      } catch {
        continue
      }
      writeFileSync(file, text.split(PLANTED).join(SCRIPT_URL.replace(/"/g, '\\"')))
    }
    const { store, http } = await startMarginalia(cleanups, {}, await openStore({ file: tmp.file }))
    expect(store.listSessions().map((s) => s.url)).toEqual([SCRIPT_URL])
    const { page } = await chromium.newPage()
    await page.goto(`${http.url}/`)
    await eventually(() => page.locator('article.card').count(), 20_000).toBe(1)
    // The page's URL is there to read, in the group header and on the card, but nothing links to it.
    expect(await page.locator('.session-meta').innerText()).toContain('document.title')
    expect(await page.locator('article.card .page-link').getAttribute('title')).toBe(SCRIPT_URL)
    expect(await page.locator('a[href^="javascript:" i]').count()).toBe(0)
    await page.locator('article.card .page-link').click()
    await page.locator('.session-meta span[title]').first().click()
    expect(await page.title()).not.toBe('ran')
  })
})
