/**
 * The extension's worker builds every URL itself from a named operation and ids of their kind:
 * what a page posts is checked field by field, and nothing it says becomes a path segment.
 */
import { describe, expect, it } from 'vitest'
import { OPERATIONS, OperationRefused, operationOf, requestFor } from '../../../../src/browser/extension/operations.js'

const SERVER = 'http://127.0.0.1:4848'

describe('the extension worker\'s operations', () => {
  it('builds the URL of each operation from validated ids, on the configured server only', () => {
    expect(requestFor({ op: 'addAnnotation', session: 'ses_0abc12', body: '{"comment":"hi"}' }, SERVER)).toMatchObject({ url: `${SERVER}/api/sessions/ses_0abc12/annotations`, method: 'POST', contentType: 'application/json' })
    expect(requestFor({ op: 'readSession', session: 'ses_1', query: { limit: '1', cursor: 'abc_12' } }, `${SERVER}/`).url).toBe(`${SERVER}/api/sessions/ses_1?limit=1&cursor=abc_12`)
    // The overlay looks for its page's sessions by the page's URL (the worker passes back only the site's).
    expect(requestFor({ op: 'listSessions', query: { limit: '500', url: 'http://localhost:5173/checkout' } }, SERVER).url).toBe(`${SERVER}/api/sessions?limit=500&url=${encodeURIComponent('http://localhost:5173/checkout')}`)
    expect(requestFor({ op: 'remove', annotation: 'ann_9' }, SERVER)).toMatchObject({ url: `${SERVER}/api/annotations/ann_9`, method: 'DELETE' })
    expect(requestFor({ op: 'upload', base64: 'iVBORw0K', contentType: 'text/html' }, SERVER)).toMatchObject({ url: `${SERVER}/api/attachments`, contentType: 'application/octet-stream' })
  })

  it('refuses every route that is not an operation, and every id, query or body that is not of its kind', () => {
    const refused = [
      { op: 'createAgent' },
      { op: 'constructor' },
      { op: '__proto__' },
      { op: 'addAnnotation', session: '../agents?', body: '{}' },
      { op: 'addAnnotation', session: 'ses_1/../../agents', body: '{}' },
      { op: 'addAnnotation', session: 'ses_1%2F..%2Fagents', body: '{}' },
      { op: 'addAnnotation', session: 'idn_1', body: '{}' },
      { op: 'reply', annotation: 'ses_1', body: '{}' },
      { op: 'readAnnotation', annotation: 'ann_1?x=' },
      { op: 'readSession', session: 'ses_1', query: { role: 'admin' } },
      { op: 'readSession', session: 'ses_1', query: { limit: '1&x=../agents' } },
      { op: 'listSessions', query: { cursor: '../../agents' } },
      { op: 'listSessions', query: { url: 'javascript:alert(1)' } },
      { op: 'listSessions', query: { url: 'http://a.test/ b' } },
      { op: 'createSession', body: '[1]' },
      { op: 'createSession', body: 'not json' },
      { op: 'createSession' },
      'GET /api/agents',
      null,
    ]
    for (const raw of refused) expect(() => requestFor(raw, SERVER), JSON.stringify(raw)).toThrow(OperationRefused)
  })

  it('no operation names an admin, people, agent, identity or sign-in route', () => {
    for (const route of Object.values(OPERATIONS)) expect(route).not.toMatch(/identities|people|agents|auth\/(token|redeem|popup|me)|sign-in/)
  })

  it('turns the overlay\'s own requests into operations, and a traversal into none', () => {
    expect(operationOf(`${SERVER}/api/sessions/ses_1/annotations`, 'POST', SERVER)).toEqual({ op: 'addAnnotation', session: 'ses_1' })
    expect(operationOf(`${SERVER}/api/sessions/ses_1?limit=500`, 'GET', SERVER)).toEqual({ op: 'readSession', session: 'ses_1', query: { limit: '500' } })
    expect(operationOf(`${SERVER}/api/sessions/../agents?/annotations`, 'POST', SERVER)).toBeUndefined()
    expect(operationOf(`${SERVER}/api/agents`, 'POST', SERVER)).toBeUndefined()
    expect(operationOf('http://elsewhere.test/api/sessions', 'GET', SERVER)).toBeUndefined()
  })
})
