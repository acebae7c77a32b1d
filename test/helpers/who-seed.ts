/**
 * A team inbox with two people and two agents at work, made over REST with their own
 * tokens, so every `by` comes from a real sign-in or agent token: Alice writes two annotations,
 * Bob one, and one is written with no identity ("you"); ci-agent acknowledges one of Alice's and
 * replies to Bob's, review-bot replies to Alice's other one.
 */
import { expect } from 'vitest'
import { addAgent, addPerson } from '../../src/auth/identities.js'
import type { Annotation, Store } from '../../src/index.js'
import { request } from './http.js'

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })
export const codeOf = (link: string) => decodeURIComponent(new URL(link).hash.replace(/^#code=/, ''))

async function signIn(url: string, link: string): Promise<string> {
  const r = await request(`${url}/auth/redeem`, { method: 'POST', body: { code: codeOf(link) } })
  expect(r.status).toBe(200)
  return r.json.token as string
}

export async function seedTeam(store: Store, url: string) {
  const alice = await addPerson(store, 'Alice Martin', { publicUrl: url })
  const bob = await addPerson(store, 'Bob Stone', { publicUrl: url })
  const admin = await addPerson(store, 'Sam Ops', { role: 'admin', publicUrl: url })
  const ci = await addAgent(store, 'ci-agent')
  const bot = await addAgent(store, 'review-bot')
  const tokens = { alice: await signIn(url, alice.link), bob: await signIn(url, bob.link) }

  const session = await request(`${url}/api/sessions`, { method: 'POST', headers: bearer(tokens.alice), body: { url: 'http://localhost:5173/shop' } })
  expect(session.status).toBe(201)
  const sessionId = session.json.id as string
  const write = async (token: string, comment: string): Promise<Annotation> => {
    const r = await request(`${url}/api/sessions/${sessionId}/annotations`, { method: 'POST', headers: bearer(token), body: { comment } })
    expect(r.status).toBe(201)
    return r.json as Annotation
  }
  const local = await store.addAnnotation({ sessionId, comment: 'Written before the team came: the logo is blurry' })
  const a1 = await write(tokens.alice, 'Alice: the checkout button is cut off')
  const b1 = await write(tokens.bob, 'Bob: prices overlap the images')
  const a2 = await write(tokens.alice, 'Alice: the footer links are dead')

  const agentPost = async (token: string, path: string, body: unknown, status: number) => {
    const r = await request(`${url}${path}`, { method: 'POST', headers: bearer(token), body })
    expect(r.status).toBe(status)
  }
  await agentPost(ci.token, `/api/annotations/${a1.id}/acknowledge`, { message: 'ci-agent: on it' }, 200)
  await agentPost(ci.token, `/api/annotations/${b1.id}/replies`, { message: 'ci-agent: which breakpoint?' }, 201)
  await agentPost(bot.token, `/api/annotations/${a2.id}/replies`, { message: 'review-bot: the links point to /old' }, 201)
  await agentPost(bot.token, `/api/annotations/${a2.id}/resolve`, { summary: 'review-bot: fixed the links' }, 200)

  return {
    sessionId,
    people: { alice, bob, admin },
    agents: { ci, bot },
    tokens,
    annotations: { local, a1, b1, a2 },
  }
}
