import { describe, expect, it } from 'vitest'
import { MarginaliaError, NotFoundError } from '../../../src/index.js'
import { toToolError } from '../../../src/tools/result.js'
import { memoryStore } from '../../helpers/store.js'
import { connect, errorOf } from '../../helpers/mcp.js'
import { useCleanups } from '../../helpers/cleanup.js'

const closers = useCleanups()

describe('tool errors name the tool to call next (store errors, read by REST clients too, need not)', () => {
  it('NOT_FOUND over MCP says where the existing sessions and annotations are listed', async () => {
    const mcp = await connect(memoryStore())
    closers.push(() => mcp.close())
    expect(errorOf(await mcp.call('get_session', { id: 'ses_missing' }))).toEqual({
      code: 'NOT_FOUND',
      message: 'No session with id "ses_missing" exists (list_sessions shows the existing sessions).',
      details: { kind: 'session', id: 'ses_missing' },
    })
    expect(errorOf(await mcp.call('acknowledge', { id: 'ann_missing' }))).toEqual({
      code: 'NOT_FOUND',
      message: 'No annotation with id "ann_missing" exists (get_all_pending or get_session shows existing annotations).',
      details: { kind: 'annotation', id: 'ann_missing' },
    })
  })

  it('the hint comes from the code and details, whatever the store says', () => {
    const session = toToolError(new MarginaliaError('NOT_FOUND', 'No session with id "s1" exists.', { kind: 'session', id: 's1' }))
    expect(session).toEqual({ code: 'NOT_FOUND', message: 'No session with id "s1" exists (list_sessions shows the existing sessions).', details: { kind: 'session', id: 's1' } })
    const expired = toToolError(new MarginaliaError('CURSOR_EXPIRED', 'Changes since rev 3 are gone.', { sinceRev: 3, oldestRev: 40, currentRev: 90 }))
    expect(expired.message).toBe(
      'Changes since rev 3 are no longer available: the oldest event still kept is rev 40. Take a fresh snapshot (get_all_pending / get_session) and continue from the current rev 90.',
    )
    expect(expired.details).toEqual({ sinceRev: 3, oldestRev: 40, currentRev: 90 })
  })

  it('an error without the details a hint needs keeps the store message; other codes pass through as they are', () => {
    expect(toToolError(new MarginaliaError('NOT_FOUND', 'Gone.')).message).toBe('Gone.')
    expect(toToolError(new MarginaliaError('CONFLICT', 'Changed meanwhile.', { currentRev: 4 }))).toEqual({ code: 'CONFLICT', message: 'Changed meanwhile.', details: { currentRev: 4 } })
    // A long id is echoed clipped once, as the store clipped it.
    const long = 'x'.repeat(500)
    expect(toToolError(new NotFoundError('session', long)).message).toContain('… (500 characters)" exists (list_sessions')
  })
})
