/**
 * What the store keeps of an anchored annotation: the fingerprint, shadow/iframe
 * scopes, text quote, click point and name of its element, more elements and a dragged area —
 * bounded by the vocabulary's limits, with errors that name the field — and how the agent's
 * one-line view shows them.
 */
import { describe, expect, it } from 'vitest'
import { AddAnnotationInput, LIMITS } from '../../../src/store/model.js'
import { renderLine, toSummary } from '../../../src/views/summary.js'
import { memoryStore } from '../../helpers/store.js'

const element = {
  selector: 'button.delete',
  scopes: ['x-card[title="Second"]', 'x-actions'],
  fingerprint: { tag: 'button', text: 'Delete', attributes: { 'aria-label': 'Delete' }, near: 'Second Edit Delete' },
  quote: { exact: 'Del', prefix: '', suffix: 'ete', start: 0, end: 3 },
  at: { x: 0.5, y: 0.25 },
  label: "button 'Delete'",
}

describe('anchored annotations in the store', () => {
  it('keeps fingerprint, scopes, quote, click point, label, more elements and the area, and summarises them in one line', async () => {
    const store = await memoryStore()
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({
      sessionId: session.id,
      comment: 'These do not line up',
      element,
      elements: [{ selector: 'button.edit', fingerprint: { tag: 'button', text: 'Edit' }, rect: { x: 1, y: 2, width: 30, height: 20 } }],
      area: { x: 10, y: 1200, width: 300, height: 100 },
    })
    expect(a.element).toEqual(element)
    expect(a.elements).toHaveLength(1)
    expect(a.area).toEqual({ x: 10, y: 1200, width: 300, height: 100 })
    const s = toSummary(a)
    expect(s).toMatchObject({ selector: 'x-card[title="Second"] >>> x-actions >>> button.delete', label: "button 'Delete'", elements: 1, area: '10,1200 300x100' })
    expect(renderLine(s)).toContain("at `x-card[title=\"Second\"] >>> x-actions >>> button.delete` button 'Delete' +1 element area 10,1200 300x100: These do not line up")
    await store.close()
  })

  it('refuses what is over the limits, naming the field', () => {
    const many = Array.from({ length: LIMITS.elements + 1 }, (_, i) => ({ selector: `li:nth-of-type(${i + 1})` }))
    const tooMany = AddAnnotationInput.safeParse({ sessionId: 's', comment: 'x', elements: many })
    expect(tooMany.success).toBe(false)
    expect(JSON.stringify(tooMany.error!.issues)).toContain(`must have at most ${LIMITS.elements} elements`)
    expect(tooMany.error!.issues[0]!.path).toEqual(['elements'])
    const deep = AddAnnotationInput.safeParse({ sessionId: 's', comment: 'x', element: { selector: 'b', scopes: Array(LIMITS.scopes + 1).fill('x-a') } })
    expect(deep.error!.issues[0]!.path).toEqual(['element', 'scopes'])
    const far = AddAnnotationInput.safeParse({ sessionId: 's', comment: 'x', element: { selector: 'b', at: { x: 2, y: 0 } } })
    expect(far.error!.issues[0]!.path).toEqual(['element', 'at', 'x'])
    const attrs = Object.fromEntries(Array.from({ length: LIMITS.fingerprintAttributes + 1 }, (_, i) => [`data-a${i}`, 'v']))
    const fat = AddAnnotationInput.safeParse({ sessionId: 's', comment: 'x', element: { selector: 'b', fingerprint: { tag: 'b', attributes: attrs } } })
    expect(fat.error!.issues[0]!.path).toEqual(['element', 'fingerprint', 'attributes'])
  })
})
