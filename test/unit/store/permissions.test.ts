/** Permission requests in the store: recorded, answered once, expired, the same request twice, bounded. */
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../../src/store/index.js'
import { MAX_PERMISSIONS } from '../../../src/store/permissions.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

function clockStore() {
  const t = { now: Date.parse('2026-11-29T10:00:00.000Z') }
  const store = createMemoryStore({ clock: () => new Date(t.now) })
  cleanups.push(() => store.close())
  return { store, t }
}

describe('permission requests in the store', () => {
  it('a request is one event; sent again while open it is the same request; answered once, with who answered', async () => {
    const { store } = clockStore()
    const rev = store.rev
    const request = { requestId: 'tbxkq', toolName: 'Bash', description: 'Run tests', inputPreview: '{"command":"npm test"}' }
    const first = await store.requestPermission(request)
    await store.requestPermission(request)
    expect(store.rev).toBe(rev + 1)
    expect(first).toMatchObject({ ...request, requestedAt: '2026-11-29T10:00:00.000Z', expiresAt: '2026-11-29T10:10:00.000Z' })
    const answered = await store.answerPermission('tbxkq', { behavior: 'allow' })
    expect(answered.answer).toMatchObject({ behavior: 'allow', at: '2026-11-29T10:00:00.000Z' })
    await expect(store.answerPermission('tbxkq', { behavior: 'deny' })).rejects.toMatchObject({ code: 'CONFLICT' })
    await expect(store.answerPermission('never', { behavior: 'deny' })).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await expect(store.answerPermission('tbxkq', { behavior: 'yes' as never })).rejects.toMatchObject({ code: 'INVALID_PARAMS' })
  })

  it('refuses a bad request id and an answer after expiry; keeps at most MAX_PERMISSIONS, the oldest dropped', async () => {
    const { store, t } = clockStore()
    await expect(store.requestPermission({ requestId: 'a b', toolName: 'Bash', description: '', inputPreview: '' })).rejects.toMatchObject({ code: 'INVALID_PARAMS' })
    await store.requestPermission({ requestId: 'soon', toolName: 'Bash', description: '', inputPreview: 'ls', timeoutMs: 1_000 })
    t.now += 1_000
    await expect(store.answerPermission('soon', { behavior: 'allow' })).rejects.toThrow(/expired .* terminal/)
    for (let i = 0; i < MAX_PERMISSIONS + 5; i++) {
      t.now += 1
      await store.requestPermission({ requestId: `r${i}`, toolName: 'Bash', description: '', inputPreview: String(i) })
    }
    const kept = store.listPermissions()
    expect(kept).toHaveLength(MAX_PERMISSIONS)
    expect(kept[0]!.requestId).toBe('r5')
    expect(kept.at(-1)!.requestId).toBe(`r${MAX_PERMISSIONS + 4}`)
  })
})
