import { describe, expect, it } from 'vitest'
import ts from 'typescript'
import { lit, reproTest } from '../../../src/views/repro.js'
import type { Annotation } from '../../../src/store/model.js'

const at = '2026-11-29T10:00:00.000Z'
const annotation: Annotation = {
  id: 'a_7',
  sessionId: 's_1',
  status: 'pending',
  comment: "The total ignores the coupon\nit should say $36 */ 'quoted'",
  url: 'http://127.0.0.1:5173/cart',
  element: { selector: '#total', role: 'status', accessibleName: 'Total', fingerprint: { tag: 'output', text: '$40.00' } },
  steps: [
    { kind: 'viewport', at, width: 1024, height: 700 },
    { kind: 'navigate', at, url: 'http://127.0.0.1:5173/signin' },
    { kind: 'type', at, masked: true, target: { name: 'Password', tag: 'input', selector: '#password' } },
    { kind: 'click', at, target: { role: 'button', name: 'Sign in', selector: 'form > button' } },
    { kind: 'submit', at, target: { role: 'form', name: 'Sign in', selector: 'form' } },
    { kind: 'navigate', at, url: 'http://127.0.0.1:5173/shop' },
    { kind: 'click', at, target: { role: 'button', name: 'Add to cart', near: 'Chair', selector: 'li:nth-of-type(2) > button' } },
    { kind: 'route', at, url: 'http://127.0.0.1:5173/cart' },
    { kind: 'type', at, value: "SAVE'10", target: { role: 'textbox', name: 'Coupon code', selector: '#coupon' } },
  ],
  replies: [],
  createdAt: at,
  updatedAt: at,
  rev: 0,
}

describe('marginalia repro', () => {
  const file = reproTest(annotation)

  it('is TypeScript that compiles', () => {
    const out = ts.transpileModule(file, { reportDiagnostics: true, compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } })
    expect(out.diagnostics ?? []).toEqual([])
  })

  it('starts at the first recorded URL, relative to APP, with the recorded viewport', () => {
    expect(file).toContain("const APP = process.env.REPRO_BASE_URL ?? 'http://127.0.0.1:5173'")
    expect(file).toContain('await page.setViewportSize({ width: 1024, height: 700 })')
    expect(file).toContain("await page.goto(APP + '/signin')")
  })

  it('finds elements by role and name first (in their row when there is one), CSS last', () => {
    const add = file.indexOf("filter({ hasText: 'Chair' }).getByRole('button', { name: 'Add to cart', exact: true })")
    const byRole = file.indexOf("page.getByRole('button', { name: 'Add to cart', exact: true })")
    const css = file.indexOf("page.locator('li:nth-of-type(2) > button')")
    expect(add).toBeGreaterThan(0)
    expect(byRole).toBeGreaterThan(add)
    expect(css).toBeGreaterThan(byRole)
  })

  it('replays typing, takes unrecorded values from the environment, waits for what a click caused', () => {
    expect(file).toContain(".fill('SAVE\\'10')")
    expect(file).toContain("fill(process.env.REPRO_STEP_3 ?? '(not recorded)')")
    expect(file).toContain("await page.waitForURL(APP + '/shop')")
    expect(file).toContain("await expect(page).toHaveURL(APP + '/cart')")
    expect(file).toContain('// (sent by the step before)')
  })

  it('ends with the comment as a comment and the element asserted visible', () => {
    expect(file).toContain("  // The total ignores the coupon\n  // it should say $36 */ 'quoted'\n")
    expect(file).toMatch(/await expect\(await find\(\n {4}page\.getByRole\('status', \{ name: 'Total', exact: true \}\),[\s\S]*page\.locator\('#total'\),\n {2}\)\)\.toBeVisible\(\)/)
  })

  it('makes string literals of anything', () => {
    for (const s of ["it's", 'a "b"', 'back\\slash', 'line\nbreak', '\u2028', "\\'"]) expect(eval(lit(s))).toBe(s)
  })
})
