/**
 * `marginalia doctor` says which way a new annotation reaches each agent set up in the project,
 * by running each hook `init` installed (and the Claude Code plugin's monitor) with a sample
 * annotation — never on the person's own store — and fails, with the fix, when they cannot run.
 */
import { existsSync, rmSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../helpers/cli.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { annotate, makeProject } from './lib.js'

const cleanups = useCleanups()

interface Check {
  name: string
  status: 'ok' | 'warn' | 'fail'
  detail: string
  fix?: string
}

async function doctor(root: string, home: string): Promise<{ code: number | null; checks: Check[] }> {
  const run = await runCli(['doctor', '--json', '--port', '1'], root, { HOME: home }, 60_000)
  return { code: run.code, checks: (JSON.parse(run.stdout) as { checks: Check[] }).checks.filter((c) => c.name.startsWith('push: ')) }
}

describe('doctor: each agent’s push path', () => {
  it('runs every installed hook and the plugin monitor with a sample, and names each agent’s path', { timeout: 90_000 }, async () => {
    const p = makeProject(cleanups)
    const init = await runCli(['init', '--yes', '--agent', 'claude', '--agent', 'cursor', '--agent', 'codex', '--agent', 'gemini', '--agent', 'vscode', '--home-config', '--dir', p.root], p.root, { HOME: p.home })
    expect(init.code, init.stderr).toBe(0)
    // The person's own pending annotation: doctor must neither tell it to anyone nor record a told ledger beside it.
    await annotate(p.store, 'The Buy button is grey')

    const { checks } = await doctor(p.root, p.home)
    expect(checks.map((c) => [c.name, c.status]), JSON.stringify(checks, null, 1)).toEqual([
      ['push: Claude Code', 'ok'],
      ['push: Cursor', 'ok'],
      ['push: Codex', 'ok'],
      ['push: Gemini CLI', 'ok'],
      ['push: VS Code', 'ok'],
    ])
    const detail = Object.fromEntries(checks.map((c) => [c.name, c.detail]))
    expect(detail['push: Claude Code']).toMatch(/^push, idle or busy \(the personal plugin's monitor ran and printed the sample\); next turn \(hooks Stop, SubagentStop, UserPromptSubmit, SessionStart in \.claude\/settings\.json answered the sample\)$/)
    expect(detail['push: Cursor']).toBe('next turn (hooks stop, sessionStart in .cursor/hooks.json answered the sample)')
    expect(detail['push: Codex']).toMatch(/^next turn \(hooks Stop, UserPromptSubmit, SessionStart/)
    expect(detail['push: Gemini CLI']).toMatch(/^next turn \(hooks AfterAgent, BeforeAgent, SessionStart/)
    expect(detail['push: VS Code']).toMatch(/^while it watches/)
    expect(existsSync(path.join(p.root, '.marginalia', 'told.json'))).toBe(false)
  })

  it('fails with the fix when the hooks cannot run (marginalia is not installed in the project)', { timeout: 90_000 }, async () => {
    const p = makeProject(cleanups)
    const init = await runCli(['init', '--yes', '--agent', 'cursor', '--dir', p.root], p.root, { HOME: p.home })
    expect(init.code, init.stderr).toBe(0)
    rmSync(path.join(p.root, 'node_modules', '.bin', 'marginalia'))

    const { code, checks } = await doctor(p.root, p.home)
    expect(code).toBe(1)
    expect(checks).toHaveLength(1)
    expect(checks[0]).toMatchObject({ name: 'push: Cursor', status: 'fail' })
    expect(checks[0]!.detail).toMatch(/^stop: exit code 127.*; sessionStart: exit code 127/)
    expect(checks[0]!.fix).toContain('npx --no-install marginalia init --agent cursor')
  })
})
