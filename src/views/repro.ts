/**
 * An annotation's steps to reproduce as a Playwright Test file (TypeScript): it opens the first
 * recorded URL, replays each step — finding each element by its role and accessible name first
 * (in the row it was in when several are alike), then its label, text and test id, a CSS
 * selector last — and ends asserting that the annotated element is visible, the person's comment
 * above it as a comment. `npx playwright test` runs it as it is against the running app;
 * `REPRO_BASE_URL` points it at another origin (a staging copy), and values that were not
 * recorded (a password, a masked field) come from `REPRO_STEP_<n>`.
 */
import type { Annotation, ElementInfo, Step, StepTarget } from '../store/model.js'
import { firstUrl, stepLine } from '../store/steps.js'

/** ARIA roles Playwright's `getByRole` knows (a role outside the list is not asked for: the next locator is). */
const ROLES = new Set(
  'alert alertdialog application article banner blockquote button caption cell checkbox code columnheader combobox complementary contentinfo definition deletion dialog directory document emphasis feed figure form generic grid gridcell group heading img insertion link list listbox listitem log main marquee math meter menu menubar menuitem menuitemcheckbox menuitemradio navigation none note option paragraph presentation progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider spinbutton status strong subscript superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem'.split(' '),
)
const CONTAINERS = 'li, tr, article, [role=row], [role=listitem], [role=article], [role=gridcell]'

/** A single-quoted TypeScript string literal of `s` (any character, escaped). */
export function lit(s: string): string {
  return `'${JSON.stringify(s).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`
}

/** A name clipped by the recorder ("…" at the end) is matched as a prefix, a whole one exactly. */
function nameOption(name: string): string {
  return name.endsWith('…') ? `{ name: ${lit(name.slice(0, -1))} }` : `{ name: ${lit(name)}, exact: true }`
}

/** The locators that may find a step's element, best first. */
function candidates(t: StepTarget, field: boolean): string[] {
  const out: string[] = []
  const role = t.role && ROLES.has(t.role) ? t.role : undefined
  const name = t.name
  if (role && name) {
    const byRole = `getByRole(${lit(role)}, ${nameOption(name)})`
    if (t.near) out.push(`page.locator(${lit(CONTAINERS)}).filter({ hasText: ${lit(t.near.replace(/…$/, ''))} }).${byRole}`)
    out.push(`page.${byRole}`)
  }
  if (name && field) out.push(`page.getByLabel(${lit(name.replace(/…$/, ''))}${name.endsWith('…') ? '' : ', { exact: true }'})`)
  if (name && field) out.push(`page.getByPlaceholder(${lit(name.replace(/…$/, ''))})`)
  if (t.testId) out.push(`page.getByTestId(${lit(t.testId)})`)
  const text = t.text ?? (role ? undefined : name)
  if (text && !field) {
    if (t.near) out.push(`page.locator(${lit(CONTAINERS)}).filter({ hasText: ${lit(t.near.replace(/…$/, ''))} }).getByText(${lit(text.replace(/…$/, ''))})`)
    out.push(`page.getByText(${lit(text.replace(/…$/, ''))}${text.endsWith('…') ? '' : ', { exact: true }'})`)
  }
  if (t.selector) out.push(`page.locator(${lit(t.selector)})`)
  return out
}

function findCall(t: StepTarget | undefined, field: boolean): string | undefined {
  const c = t ? candidates(t, field) : []
  if (c.length === 0) return undefined
  return c.length === 1 ? `await find(${c[0]})` : `await find(\n      ${c.join(',\n      ')},\n    )`
}

/** The annotated element's locators: its role and name, its text, its selector. */
function elementCandidates(e: ElementInfo): string[] {
  const target: StepTarget = {
    ...(e.role ? { role: e.role } : {}),
    ...(e.accessibleName ? { name: e.accessibleName.slice(0, 200) } : {}),
    ...(e.fingerprint?.text ? { text: e.fingerprint.text } : {}),
    ...(e.fingerprint?.attributes?.['data-testid'] ? { testId: e.fingerprint.attributes['data-testid'] } : {}),
    ...(e.scopes?.length ? {} : { selector: e.selector }),
  }
  return candidates(target, false)
}

/** Where `url` is relative to the app's origin (`APP`), as code; a URL elsewhere stays whole. */
function urlCode(url: string, origin: string | undefined): string {
  try {
    const u = new URL(url)
    if (origin && u.origin === origin) return `APP + ${lit(`${u.pathname}${u.search}${u.hash}`)}`
  } catch {
    // not a URL: as it is
  }
  return lit(url)
}

/** Whether a step is what the one before it caused (a click that submits, a link that navigates). */
function causedByPrevious(prev: Step | undefined): boolean {
  return prev !== undefined && (prev.kind === 'click' || prev.kind === 'key' || prev.kind === 'submit' || prev.kind === 'check' || prev.kind === 'uncheck' || prev.kind === 'select' || prev.kind === 'route')
}

function stepCode(s: Step, n: number, prev: Step | undefined, origin: string | undefined): string[] {
  const field = s.kind === 'type' || s.kind === 'select' || s.kind === 'check' || s.kind === 'uncheck'
  const at = findCall(s.target, field)
  const value = s.value !== undefined ? lit(s.value) : `process.env.REPRO_STEP_${n} ?? '(not recorded)'`
  switch (s.kind) {
    case 'click':
      return at ? [`await (${at}).click()`] : []
    case 'type':
      return at ? [`await (${at}).fill(${value})`] : []
    case 'select':
      return at ? [`await (${at}).selectOption(${s.value !== undefined ? `{ label: ${lit(s.value.split(', ')[0] ?? '')} }` : value})`] : []
    case 'check':
      return at ? [`await (${at}).check()`] : []
    case 'uncheck':
      return at ? [`await (${at}).uncheck()`] : []
    case 'submit':
      // Sent by the click or the Enter before it; on its own (a script's submit), sent here.
      if (prev?.kind === 'click' || prev?.kind === 'key') return ['// (sent by the step before)']
      return at ? [`await (${at}).evaluate((form) => (form as HTMLFormElement).requestSubmit())`] : []
    case 'key':
      return at ? [`await (${at}).press(${lit(s.key ?? 'Enter')})`] : [`await page.keyboard.press(${lit(s.key ?? 'Enter')})`]
    case 'route':
      return s.url ? [`await expect(page).toHaveURL(${urlCode(s.url, origin)})`] : []
    case 'navigate':
      if (!s.url) return []
      return causedByPrevious(prev) ? [`await page.waitForURL(${urlCode(s.url, origin)})`] : [`await page.goto(${urlCode(s.url, origin)})`]
    case 'scroll':
      return [`await page.evaluate(([x, y]) => window.scrollTo(x, y), [${s.x ?? 0}, ${s.y ?? 0}])`]
    case 'viewport':
      return s.width && s.height ? [`await page.setViewportSize({ width: ${s.width}, height: ${s.height} })`] : []
  }
}

/** The comment as `//` lines (any text: a line comment cannot be closed early). */
function commentLines(text: string, indent: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => `${indent}//${l.trim() ? ` ${l.trimEnd()}` : ''}`)
}

const FIND_HELPER = `/**
 * The first of the locators that finds exactly one element (role and name first, CSS last),
 * waiting for the page to show one.
 */
async function find(...candidates: Locator[]): Promise<Locator> {
  let found: Locator | undefined
  await expect(async () => {
    for (const c of candidates) {
      if ((await c.count()) === 1) {
        found = c
        return
      }
    }
    throw new Error(\`none of these finds exactly one element: \${candidates.join(', ')}\`)
  }).toPass({ timeout: 10_000 })
  return found!
}`

/** The Playwright Test file that replays `a`'s steps and checks its element is visible. */
export function reproTest(a: Annotation): string {
  const steps = a.steps ?? []
  const start = firstUrl(steps) ?? a.url
  let origin: string | undefined
  try {
    origin = start ? new URL(start).origin : undefined
  } catch {
    origin = undefined
  }
  const lines: string[] = [
    `// Steps to reproduce annotation ${a.id}, recorded by Marginalia in the person's browser.`,
    `// Run against the running app: npx playwright test <this file>`,
    `// REPRO_BASE_URL=<origin> runs it against another copy; REPRO_STEP_<n> gives a value that was not recorded.`,
    `import { expect, test, type Locator } from '@playwright/test'`,
    '',
    `const APP = process.env.REPRO_BASE_URL ?? ${lit(origin ?? 'http://localhost:5173')}`,
    '',
    FIND_HELPER,
    '',
    `test(${lit(`annotation ${a.id}: ${a.comment.replace(/\s+/g, ' ').trim().slice(0, 80)}`)}, async ({ page }) => {`,
  ]
  const firstNav = steps.findIndex((s) => s.kind === 'navigate' || s.kind === 'route')
  // The viewport before the first page, then the first page.
  const viewport = steps.find((s) => s.kind === 'viewport' && s.width && s.height)
  if (viewport) lines.push(`  await page.setViewportSize({ width: ${viewport.width}, height: ${viewport.height} })`)
  if (start) lines.push(`  await page.goto(${urlCode(start, origin)})`)
  steps.forEach((s, i) => {
    const n = i + 1
    lines.push(`  // ${n}. ${stepLine(s, start).replace(/[\r\n]+/g, ' ')}`)
    if (i === firstNav) return // opened above
    if (s === viewport) return // set above
    for (const code of stepCode(s, n, steps[i - 1], origin)) lines.push(`  ${code}`)
  })
  lines.push('')
  lines.push(...commentLines(a.comment, '  '))
  const element = a.element ? elementCandidates(a.element) : []
  if (element.length > 0) lines.push(`  await expect(await find(\n    ${element.join(',\n    ')},\n  )).toBeVisible()`)
  else lines.push('  // (the annotation is about no element: nothing to assert)')
  lines.push('})', '')
  return lines.join('\n')
}
