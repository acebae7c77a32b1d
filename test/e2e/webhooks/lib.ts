/** What the webhook process tests share: REST writes against a running server. */
export async function post<T>(base: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

/** Add `count` annotations through a server, one after another; their ids. */
export async function annotate(base: string, sessionId: string, label: string, count: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) ids.push((await post<{ id: string }>(base, `/api/sessions/${sessionId}/annotations`, { comment: `${label} ${i}` })).id)
  return ids
}
