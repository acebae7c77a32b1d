import { describe, expect, it } from 'vitest'
import { AddAnnotationInput } from '../../../src/store/model.js'
import { isOutsidePath, sourceHint } from '../../../src/store/source-location.js'
import { renderLine, toSummary } from '../../../src/views/summary.js'
import { memoryStore } from '../../helpers/store.js'

describe('annotation source location', () => {
  it('is stored with via/exact/components/callSite and shows as a short hint in summaries and text', async () => {
    const store = await memoryStore()
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({
      sessionId: session.id,
      comment: 'too small',
      element: { selector: 'button.buy' },
      source: { file: 'src/components/ui/Button.tsx', line: 12, column: 5, component: 'Button', components: ['App', 'Checkout', 'Button'], via: 'mark', exact: true, callSite: { file: 'src/Checkout.tsx', line: 42, column: 7 } },
    })
    expect(a.source).toEqual({ file: 'src/components/ui/Button.tsx', line: 12, column: 5, component: 'Button', components: ['App', 'Checkout', 'Button'], via: 'mark', exact: true, callSite: { file: 'src/Checkout.tsx', line: 42, column: 7 } })
    const s = toSummary(a)
    expect(s.source).toBe('src/components/ui/Button.tsx:12 (used at src/Checkout.tsx:42)')
    expect(renderLine(s)).toContain('in src/components/ui/Button.tsx:12 (used at src/Checkout.tsx:42)')
    await store.close()
  })

  it('flags (never trusts) paths outside the project, and bounds sizes', async () => {
    const store = await memoryStore()
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'x', source: { file: '../../etc/passwd', line: 1 } })
    expect(a.source).toEqual({ file: '../../etc/passwd', line: 1, outside: true })
    const b = await store.addAnnotation({ sessionId: session.id, comment: 'x', source: { file: 'src/App.tsx', line: 1, outside: true } })
    expect(b.source?.outside).toBeUndefined()
    expect(isOutsidePath('/etc/passwd')).toBe(true)
    expect(isOutsidePath('C:\\x\\y.tsx')).toBe(true)
    expect(isOutsidePath('src/a..b.tsx')).toBe(false)
    const tooMany = AddAnnotationInput.safeParse({ sessionId: 's', comment: 'x', source: { components: Array.from({ length: 9 }, (_, i) => `C${i}`) } })
    expect(tooMany.success).toBe(false)
    expect(JSON.stringify(tooMany.error?.issues)).toContain('at most 8 components')
    expect(AddAnnotationInput.safeParse({ sessionId: 's', comment: 'x', source: { file: 'a'.repeat(1001) } }).success).toBe(false)
    expect(AddAnnotationInput.safeParse({ sessionId: 's', comment: 'x', source: { via: 'guess' } }).success).toBe(false)
    expect(sourceHint({ component: 'LoginForm', via: 'vue', exact: false })).toBe('LoginForm')
    await store.close()
  })
})

describe('sources the page names by absolute path (a bundler source map: Turbopack, webpack)', () => {
  it('are made relative to the project root when inside it, call site included; others stay as given', async () => {
    const { relativeSource } = await import('../../../src/sources/resolve.js')
    const root = '/home/me/shop'
    expect(relativeSource({ file: 'file:///home/me/shop/app/shop/page.tsx', line: 7, callSite: { file: '/home/me/shop/app/page.tsx', line: 3 } }, root)).toEqual({
      file: 'app/shop/page.tsx',
      line: 7,
      callSite: { file: 'app/page.tsx', line: 3 },
    })
    expect(relativeSource({ file: '/etc/passwd', line: 1 }, root)).toEqual({ file: '/etc/passwd', line: 1 })
    expect(relativeSource({ file: 'file:///home/me/shop-other/x.tsx', line: 1 }, root)).toEqual({ file: 'file:///home/me/shop-other/x.tsx', line: 1 })
    expect(relativeSource({ file: 'src/App.tsx', line: 2 }, root)).toEqual({ file: 'src/App.tsx', line: 2 })
    expect(relativeSource({ file: 'src/App.tsx', line: 2 }, undefined)).toEqual({ file: 'src/App.tsx', line: 2 })
  })
})
