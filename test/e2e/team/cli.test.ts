/**
 * The team inbox over real processes: the operator's commands (`marginalia people`, `agents`, `revoke`,
 * each its own process) on the store a running `marginalia serve` uses. The link and the token
 * they print work on that server; secrets are printed once and never listed or stored in clear;
 * `revoke` from another process makes the agent's next request 401 and closes its open event
 * stream and MCP stream within 1 s; every mistake names the field and the fix.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli, startServeCli } from '../../helpers/cli.js'
import { request, SseClient } from '../../helpers/http.js'
import { tempDir } from '../../helpers/store.js'
import { agents, people, revoke } from '../../../src/cli/team.js'
import { bearer, codeOf } from '../../helpers/who-seed.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

/** Every file under `dir` as text (the store, its log and snapshot). */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n')
}

const MCP_HEADERS = { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' }

describe('marginalia people / agents / revoke against a running serve', () => {
  it('adds and lists; serve on that store takes the link and the token; revoke from another process: 401 at once, its streams close within 1 s', { timeout: 120_000 }, async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const store = ['--store', t.file]
    const cli = (...args: string[]) => runCli([...args, ...store], t.dir)

    // people add prints one sign-in link on stdout (and nothing else there); agents add one token.
    const added = await cli('people', 'add', 'Alice Martin', '--public-url', 'https://marginalia.example.com')
    expect(added.code).toBe(0)
    expect(added.stdout).toMatch(/^https:\/\/marginalia\.example\.com\/sign-in#code=mgc_[a-z0-9]+\.[A-Za-z0-9_-]+\n$/)
    expect(added.stderr).toMatch(/added Alice Martin \(idn_\w+, person\); the sign-in link below works once, until /)
    const link = added.stdout.trim()
    const agent = await cli('agents', 'add', 'ci-agent')
    expect(agent.code).toBe(0)
    expect(agent.stdout).toMatch(/^mga_[a-z0-9]+\.[A-Za-z0-9_-]+\n$/)
    expect(agent.stderr).toContain('shown only now')
    const token = agent.stdout.trim()
    const secrets = [token, codeOf(link), token.split('.')[1]!, codeOf(link).split('.')[1]!]

    // The lists show them, each in its own list, and never a secret or a hash.
    const peopleList = await cli('people', 'list')
    const agentList = await cli('agents', 'list')
    expect(peopleList.code).toBe(0)
    expect(agentList.code).toBe(0)
    expect(peopleList.stdout).toMatch(/^idn_\w+\tAlice Martin\tperson\t\S+\tactive\n$/)
    expect(agentList.stdout).toMatch(/^idn_\w+\tci-agent\tagent\t\S+\tactive\n$/)
    for (const out of [peopleList.stdout + peopleList.stderr, agentList.stdout + agentList.stderr]) {
      for (const s of secrets) expect(out).not.toContain(s)
      expect(out).not.toMatch(/scrypt|sha256|\$/)
    }
    // On disk: hashes only.
    const disk = allText(path.dirname(t.file))
    for (const s of secrets) expect(disk).not.toContain(s)
    expect(disk).toContain('scrypt$')

    // A server started on the same store asks for sign-in; the link's code and the token work there.
    const serve = await startServeCli(cleanups, t.dir, store)
    expect((await request(`${serve.url}/api/annotations`)).status).toBe(401)
    const redeemed = await request(`${serve.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(link) } })
    expect(redeemed.status, redeemed.text).toBe(200)
    const alice = redeemed.json.token as string
    const session = await request(`${serve.url}/api/sessions`, { method: 'POST', headers: bearer(alice), body: { url: 'http://localhost:5173/' } })
    const annotation = await request(`${serve.url}/api/sessions/${session.json.id}/annotations`, { method: 'POST', headers: bearer(alice), body: { comment: 'The logo is blurry' } })
    expect(annotation.status).toBe(201)
    expect((await request(`${serve.url}/api/annotations`, { headers: bearer(token) })).status).toBe(200)

    // MCP over HTTP with the token: initialize, a tool call that records the agent's name, and the GET stream.
    const init = await request(`${serve.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...bearer(token) }, body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ci', version: '1' } } } })
    expect(init.status).toBe(200)
    const mcpSession = init.headers['mcp-session-id'] as string
    expect(mcpSession).toBeTruthy()
    const mcp = (id: number, method: string, params: unknown) => request(`${serve.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...bearer(token), 'mcp-session-id': mcpSession, 'mcp-protocol-version': '2025-06-18' }, body: { jsonrpc: '2.0', id, method, params } })
    expect((await request(`${serve.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...bearer(token), 'mcp-session-id': mcpSession, 'mcp-protocol-version': '2025-06-18' }, body: { jsonrpc: '2.0', method: 'notifications/initialized' } })).status).toBe(202)
    const ack = await mcp(2, 'tools/call', { name: 'acknowledge', arguments: { id: annotation.json.id, message: 'On it' } })
    expect(ack.status).toBe(200)
    expect(ack.text).not.toContain('"isError":true')
    const seen = await request(`${serve.url}/api/annotations/${annotation.json.id}`, { headers: bearer(alice) })
    expect(seen.json.replies[0]).toMatchObject({ author: 'agent', by: { name: 'ci-agent', kind: 'agent' } })

    const events = await SseClient.open(`${serve.url}/api/events`, bearer(token))
    cleanups.push(() => events.close())
    expect(events.status).toBe(200)
    const mcpStream = await SseClient.open(`${serve.url}/mcp`, { ...bearer(token), 'mcp-session-id': mcpSession, 'mcp-protocol-version': '2025-06-18' })
    cleanups.push(() => mcpStream.close())
    expect(mcpStream.status).toBe(200)
    const eventsEnded = events.ended$(10_000).then(() => Date.now())
    const mcpEnded = mcpStream.ended$(10_000).then(() => Date.now())

    // revoke, as its own process, while serve runs.
    const revoked = await cli('revoke', 'ci-agent')
    expect(revoked.code).toBe(0)
    const at = /revoked agent ci-agent \(idn_\w+\) at (\S+)\n/.exec(revoked.stderr)?.[1]
    expect(at, revoked.stderr).toBeDefined()
    // The very next request is refused, REST and MCP alike.
    const next = await request(`${serve.url}/api/annotations`, { headers: bearer(token) })
    expect(next.status).toBe(401)
    expect(next.json.error.code).toBe('UNAUTHORIZED')
    expect((await mcp(3, 'tools/list', {})).status).toBe(401)
    // Both open streams end within 1 s of the revocation.
    const [eventsAt, mcpAt] = await Promise.all([eventsEnded, mcpEnded])
    expect(eventsAt - Date.parse(at!)).toBeLessThan(1_000)
    expect(mcpAt - Date.parse(at!)).toBeLessThan(1_000)
    // Added while serve runs (the CLI folds the log into the snapshot as it closes): their token
    // and link work on that server at once, without a restart.
    const late = await cli('agents', 'add', 'late-agent')
    expect(late.code).toBe(0)
    expect((await request(`${serve.url}/api/annotations`, { headers: bearer(late.stdout.trim()) })).status).toBe(200)
    const bob = await cli('people', 'add', 'Bob')
    expect(bob.code).toBe(0)
    expect((await request(`${serve.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(bob.stdout.trim()) } })).status).toBe(200)

    // Alice is untouched; the list says the agent is revoked.
    expect((await request(`${serve.url}/api/annotations`, { headers: bearer(alice) })).status).toBe(200)
    expect((await cli('agents', 'list')).stdout).toMatch(/\tci-agent\tagent\t\S+\trevoked \S+\n/)

    // Mistakes: a non-zero exit and a message naming the field and the fix.
    const unknown = await cli('revoke', 'nobody')
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toContain('Nobody is named "nobody"')
    expect(unknown.stderr).toContain('marginalia people list')
    const again = await cli('revoke', 'ci-agent')
    expect(again.code).not.toBe(0)
    expect(again.stderr).toContain('was revoked at')
    expect(serve.child.exitCode).toBeNull() // serve kept running through all of it
  })

  it('every mistake names the field and the fix, with a non-zero exit', { timeout: 60_000 }, async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const cli = (...args: string[]) => runCli([...args, '--store', t.file], t.dir)
    const cases: [string[], number, string[]][] = [
      [['people', 'add'], 2, ['people add needs exactly one NAME (got none)', 'marginalia people add "Alice Martin"']],
      [['people', 'add', 'Alice', 'Martin'], 2, ['exactly one NAME (got 2: "Alice" "Martin")', 'quote a name with spaces']],
      [['agents', 'add', ' '], 2, ['agents add needs exactly one NAME (got an empty one)', 'marginalia agents add ci-agent']],
      [['revoke'], 2, ['revoke needs exactly one NAME', 'marginalia revoke ci-agent']],
      [['people', 'add', 'Bob', '--role', 'god'], 2, ['--role must be person or admin (got "god")']],
      [['people', 'add', 'Bob', '--public-url', 'ftp://x'], 2, ['--public-url must be an http(s) URL like https://marginalia.example.com (got "ftp://x")']],
      [['people', 'frob'], 2, ['people needs add, link or list (got "frob")', 'marginalia people --help']],
      [['agents'], 2, ['agents needs add or list (got nothing)', 'marginalia agents --help']],
      [['people', 'add', 'Bob', '--rol', 'admin'], 2, ["Unknown option '--rol'", 'Did you mean --role?']],
      [['people', 'link', 'nobody'], 1, ['Nobody is named "nobody"', 'nobody was added yet', 'marginalia agents list']],
    ]
    for (const [args, code, mentions] of cases) {
      const r = await cli(...args)
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code)
      expect(r.stdout).toBe('')
      for (const m of mentions) expect(r.stderr, args.join(' ')).toContain(m)
    }
    // A name taken twice, and a link for an agent.
    expect((await cli('agents', 'add', 'ci-agent')).code).toBe(0)
    const twice = await cli('agents', 'add', 'ci-agent')
    expect(twice.code).toBe(1)
    expect(twice.stderr).toMatch(/name: "ci-agent" is already the name of agent idn_\w+; choose another name, or revoke that one first/)
    const link = await cli('people', 'link', 'ci-agent')
    expect(link.code).toBe(2)
    expect(link.stderr).toContain('ci-agent is an agent: agents use tokens, not sign-in links')
  })

  it('--help of each team command documents every option it takes, and the team guide and the CLI reference list the commands and options', { timeout: 60_000 }, async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const docs = (file: string): string => readFileSync(path.resolve(import.meta.dirname, '../../../docs', file), 'utf8')
    const team = docs('guide/team-inbox.md')
    const reference = docs('reference/cli.md')
    for (const [name, command] of [['people', people], ['agents', agents], ['revoke', revoke]] as const) {
      const help = await runCli([name, '--help'], t.dir)
      expect(help.code).toBe(0)
      expect(help.stdout).toBe(`${command.usage}\n`)
      expect(reference, `docs/reference/cli.md: marginalia ${name} --help`).toContain(`## marginalia ${name}\n\n${command.summary}.\n\n\`\`\`text\n${command.usage}\n\`\`\``)
      for (const [option, spec] of Object.entries(command.options)) {
        expect(help.stdout, `${name} --help`).toMatch(new RegExp(`^ {2}${'short' in spec ? `-${spec.short}, ` : '    '}--${option}\\b`, 'm'))
        expect(team, `docs/guide/team-inbox.md: ${name} --${option}`).toContain(`--${option}`)
      }
      for (const line of command.usage.split('\n').filter((l) => l.startsWith('marginalia '))) {
        // The team guide's command table has each synopsis (| escaped in its cells) without the common --store.
        const synopsis = line.replace(/ \[--store FILE\]$/, '').replace(/\|/g, '\\|')
        expect(team, `docs/guide/team-inbox.md lists: ${synopsis}`).toContain(`\`${synopsis}\``)
      }
    }
  })
})
