import { describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { newSecret, sign, signedHeaders } from '../../../src/webhooks/signing.js'

describe('Standard Webhooks signing', () => {
  it('makes a whsec_ secret of 24 random bytes, different each time', () => {
    const a = newSecret()
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/)
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(24)
    expect(newSecret()).not.toBe(a)
  })

  it('signs so the standardwebhooks library verifies the message, and only that message', () => {
    const secret = newSecret()
    const body = JSON.stringify({ type: 'annotation.created', timestamp: '2026-11-29T00:00:00.000Z', data: { annotation: { id: 'a1' } } })
    const headers = signedHeaders(secret, 'msg_1', new Date(), body)
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => new Webhook(secret).verify(body.replace('a1', 'a2'), headers)).toThrow()
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow()
  })

  it('is HMAC-SHA256 over "id.timestamp.body" with the decoded key (a known vector)', () => {
    // The Standard Webhooks specification's own example.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    expect(sign(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
  })
})
