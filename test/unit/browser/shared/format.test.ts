import { describe, expect, it } from 'vitest'
import { LIMITS } from '../../../../src/store/vocabulary.js'
import { agentState, clip, openQuestionOf, squash, timeAgo } from '../../../../src/browser/shared/format.js'
import type { Annotation } from '../../../../src/browser/shared/types.js'

describe('overlay helpers', () => {
  it('clip keeps short text, cuts long text to the limit with an ellipsis, never splitting a surrogate pair', () => {
    expect(clip('short', 10)).toBe('short')
    expect(clip('abcdefghij', 5)).toBe('abcd…')
    expect(clip('abcdefghij', 5)).toHaveLength(5)
    const emoji = 'ab😀cd' // the emoji is two UTF-16 units at 2..3
    expect(clip(emoji, 4)).toBe('ab…')
    expect(clip('x'.repeat(20_000), LIMITS.comment)).toHaveLength(LIMITS.comment)
    expect(squash('  a \n\t b  ')).toBe('a b')
  })

  it('says what the agent is doing', () => {
    const now = Date.parse('2026-01-01T12:00:00Z')
    expect(agentState(undefined, now)).toBe('none')
    expect(agentState({ connected: false, sessions: 0, watching: 0 }, now)).toBe('none')
    expect(agentState({ connected: true, sessions: 1, watching: 0 }, now)).toBe('connected')
    expect(agentState({ connected: true, sessions: 1, watching: 1 }, now)).toBe('listening')
    // A tool call a moment ago counts as connected, an old one does not.
    expect(agentState({ connected: false, sessions: 0, watching: 0, lastSeenAt: '2026-01-01T11:59:30Z' }, now)).toBe('connected')
    expect(agentState({ connected: false, sessions: 0, watching: 0, lastSeenAt: '2026-01-01T11:00:00Z' }, now)).toBe('none')
  })

  it('finds the open question like the store does', () => {
    const base = { id: 'a', sessionId: 's', status: 'acknowledged', comment: 'c', createdAt: '', updatedAt: '', rev: 1 } as const
    const r = (author: 'agent' | 'human', kind?: 'question') => ({ id: Math.random().toString(), author, message: 'm', createdAt: '', ...(kind ? { kind } : {}) })
    const q = r('agent', 'question')
    expect(openQuestionOf({ ...base, replies: [r('agent'), q] } as Annotation)).toBe(q)
    expect(openQuestionOf({ ...base, replies: [q, r('agent')] } as Annotation)).toBe(q)
    expect(openQuestionOf({ ...base, replies: [q, r('human')] } as Annotation)).toBeUndefined()
    expect(openQuestionOf({ ...base, replies: [] } as Annotation)).toBeUndefined()
  })

  it('writes times like a person would', () => {
    const now = Date.parse('2026-01-01T12:00:00Z')
    expect(timeAgo('2026-01-01T11:59:50Z', now)).toBe('just now')
    expect(timeAgo('2026-01-01T11:55:00Z', now)).toBe('5 min ago')
    expect(timeAgo('2026-01-01T09:00:00Z', now)).toBe('3 h ago')
    expect(timeAgo('2025-12-30T12:00:00Z', now)).toBe('2 d ago')
  })
})
