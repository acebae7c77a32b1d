import { describe, expect, it } from 'vitest'
import { AddAnnotationInput, Annotation } from '../../../src/store/model.js'
import { stepLine, stepLines } from '../../../src/store/steps.js'
import type { Step } from '../../../src/store/model.js'

const at = '2026-11-29T10:00:00.000Z'

describe('steps in words', () => {
  it('says each step as a person would, URLs relative to the first page', () => {
    const steps: Step[] = [
      { kind: 'navigate', at, url: 'http://localhost:5173/shop' },
      { kind: 'click', at, target: { role: 'button', name: 'Add to cart', near: 'Chair', selector: 'li:nth-of-type(2) > button' } },
      { kind: 'route', at, url: 'http://localhost:5173/cart?x=1#top' },
      { kind: 'type', at, value: 'SAVE10', target: { role: 'textbox', name: 'Coupon code' } },
      { kind: 'type', at, masked: true, target: { name: 'Password', tag: 'input' } },
      { kind: 'select', at, value: 'Blue', target: { role: 'combobox', name: 'Colour' } },
      { kind: 'check', at, target: { role: 'checkbox', name: 'Gift wrap' } },
      { kind: 'key', at, key: 'Enter', target: { role: 'textbox', name: 'Coupon code' } },
      { kind: 'submit', at, target: { role: 'form', name: 'Coupon' } },
      { kind: 'scroll', at, x: 0, y: 1200 },
      { kind: 'viewport', at, width: 1280, height: 720 },
      { kind: 'navigate', at, url: 'https://elsewhere.example/x' },
      { kind: 'click', at, target: { tag: 'div', selector: '#main > div:nth-of-type(3)' } },
    ]
    expect(stepLines(steps)).toEqual([
      '1. open /shop',
      '2. click button "Add to cart" (Chair)',
      '3. go to /cart?x=1#top',
      '4. type "SAVE10" in textbox "Coupon code"',
      '5. type (not recorded) in "Password"',
      '6. select "Blue" in combobox "Colour"',
      '7. check checkbox "Gift wrap"',
      '8. press Enter in textbox "Coupon code"',
      '9. submit form "Coupon"',
      '10. scroll to 0, 1200',
      '11. viewport 1280×720',
      '12. open https://elsewhere.example/x',
      '13. click #main > div:nth-of-type(3)',
    ])
  })

  it('quotes what the page wrote so a line stays one line', () => {
    expect(stepLine({ kind: 'type', at, value: 'a"b\nc', target: { role: 'textbox', name: 'Note' } })).toBe('type "a\\"b\\nc" in textbox "Note"')
  })
})

describe('the stored steps', () => {
  const base = { sessionId: 's_1', comment: 'The total ignores the coupon' }

  it('are optional: a record without them still loads', () => {
    const old = { id: 'a_1', sessionId: 's_1', status: 'pending', comment: 'x', replies: [], createdAt: at, updatedAt: at, rev: 0 }
    expect(Annotation.safeParse(old).success).toBe(true)
  })

  it('are bounded in count and length, and refuse an unknown kind', () => {
    const step = { kind: 'click', at, target: { role: 'button', name: 'Go' } }
    expect(AddAnnotationInput.safeParse({ ...base, steps: Array.from({ length: 100 }, () => step) }).success).toBe(true)
    const many = AddAnnotationInput.safeParse({ ...base, steps: Array.from({ length: 101 }, () => step) })
    expect(many.success).toBe(false)
    expect(JSON.stringify(many.error?.issues)).toContain('at most 100 steps')
    expect(AddAnnotationInput.safeParse({ ...base, steps: [{ ...step, value: 'x'.repeat(201) }] }).success).toBe(false)
    expect(AddAnnotationInput.safeParse({ ...base, steps: [{ ...step, target: { name: 'x'.repeat(201) } }] }).success).toBe(false)
    expect(AddAnnotationInput.safeParse({ ...base, steps: [{ ...step, kind: 'password' }] }).success).toBe(false)
    expect(AddAnnotationInput.safeParse({ ...base, steps: [{ ...step, key: 'a' }] }).success).toBe(false)
  })
})
