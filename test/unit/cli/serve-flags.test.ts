/** `marginalia serve`'s team flags: each limit a team server applies can be set, and a wrong value names the flag. */
import { describe, expect, it } from 'vitest'
import { teamOptions } from '../../../src/cli/serve.js'
import { DEFAULT_AUTH_FAILURE_BURST, DEFAULT_AUTH_FAILURES_PER_SECOND, DEFAULT_MAX_MCP_SESSIONS_PER_IDENTITY, DEFAULT_MAX_STREAMS_PER_IDENTITY } from '../../../src/http/defaults.js'

describe('serve: the team flags', () => {
  it('defaults the per-identity and per-address limits, and takes each from its flag', () => {
    expect(teamOptions({})).toMatchObject({
      maxMcpSessionsPerIdentity: DEFAULT_MAX_MCP_SESSIONS_PER_IDENTITY,
      maxStreamsPerIdentity: DEFAULT_MAX_STREAMS_PER_IDENTITY,
      authFailuresPerSecond: DEFAULT_AUTH_FAILURES_PER_SECOND,
      authFailureBurst: DEFAULT_AUTH_FAILURE_BURST,
    })
    expect(teamOptions({ 'sessions-per-identity': '4', 'streams-per-identity': '8', 'auth-failures': '0', 'auth-failure-burst': '50' })).toMatchObject({
      maxMcpSessionsPerIdentity: 4,
      maxStreamsPerIdentity: 8,
      authFailuresPerSecond: 0,
      authFailureBurst: 50,
    })
  })

  it('refuses a value that is not a whole number in range, naming the flag', () => {
    expect(() => teamOptions({ 'sessions-per-identity': '0' })).toThrow(/--sessions-per-identity must be a whole number from 1/)
    expect(() => teamOptions({ 'streams-per-identity': 'lots' })).toThrow(/--streams-per-identity must be a whole number/)
    expect(() => teamOptions({ 'auth-failure-burst': '-1' })).toThrow(/--auth-failure-burst must be a whole number/)
  })
})
