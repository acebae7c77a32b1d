/**
 * The hooks `init` writes, run as each agent runs them: the command from the agent's own settings
 * file, through a shell, in the project, with the agent's documented hook input on stdin. Checks
 * the answer's format, and that a session is told each annotation once, is not blocked again for
 * nothing new, and is never told of one already acknowledged.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../helpers/cli.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { acknowledge, annotate, makeProject, sh, type Project } from './lib.js'

const cleanups = useCleanups()

type Json = Record<string, unknown>

/** The command of `event` in a hooks file of Claude Code's shape (Claude Code, Codex, Gemini CLI). */
function claudeShapeCommand(file: string, event: string): string {
  const data = JSON.parse(readFileSync(file, 'utf8')) as { hooks: Record<string, { hooks: { command: string }[] }[]> }
  return data.hooks[event]!.flatMap((g) => g.hooks).find((h) => h.command.includes('marginalia'))!.command
}

function cursorCommand(file: string, event: string): string {
  const data = JSON.parse(readFileSync(file, 'utf8')) as { version: number; hooks: Record<string, { command: string }[]> }
  expect(data.version).toBe(1)
  return data.hooks[event]!.find((h) => h.command.includes('marginalia'))!.command
}

async function setUp(agent: string): Promise<Project> {
  const p = makeProject(cleanups)
  const init = await runCli(['init', '--yes', '--agent', agent, '--dir', p.root], p.root, { HOME: p.home })
  expect(init.code, init.stderr).toBe(0)
  return p
}

interface AgentCase {
  agent: string
  settings: string
  env: (root: string) => Record<string, string>
  stop: { event: string; command: (file: string) => string; input: (root: string, session: string) => Json; answer: (out: Json) => string }
  context: { event: string; command: (file: string) => string; input: (root: string, session: string) => Json; answer: (out: Json) => string }
}

const blockReason = (out: Json): string => {
  expect(out.decision).toBe('block')
  return String(out.reason)
}
const additionalContext = (event: string) => (out: Json): string => {
  const specific = out.hookSpecificOutput as Json
  expect(specific.hookEventName).toBe(event)
  return String(specific.additionalContext)
}

const CASES: AgentCase[] = [
  {
    agent: 'claude',
    settings: '.claude/settings.json',
    env: (root) => ({ CLAUDE_PROJECT_DIR: root }),
    stop: {
      event: 'Stop',
      command: (f) => claudeShapeCommand(f, 'Stop'),
      input: (root, session) => ({ session_id: session, transcript_path: path.join(root, 't.jsonl'), cwd: root, permission_mode: 'default', hook_event_name: 'Stop', stop_hook_active: false }),
      answer: blockReason,
    },
    context: {
      event: 'UserPromptSubmit',
      command: (f) => claudeShapeCommand(f, 'UserPromptSubmit'),
      input: (root, session) => ({ session_id: session, transcript_path: path.join(root, 't.jsonl'), cwd: root, permission_mode: 'default', hook_event_name: 'UserPromptSubmit', prompt: 'fix the header' }),
      answer: additionalContext('UserPromptSubmit'),
    },
  },
  {
    agent: 'cursor',
    settings: '.cursor/hooks.json',
    env: () => ({}),
    stop: {
      event: 'stop',
      command: (f) => cursorCommand(f, 'stop'),
      input: (root, session) => ({ conversation_id: session, generation_id: 'g1', hook_event_name: 'stop', workspace_roots: [root], status: 'completed', loop_count: 0, cursor_version: '1.7.0' }),
      answer: (out) => String(out.followup_message),
    },
    context: {
      event: 'sessionStart',
      command: (f) => cursorCommand(f, 'sessionStart'),
      input: (root, session) => ({ conversation_id: session, session_id: session, hook_event_name: 'sessionStart', workspace_roots: [root], is_background_agent: false, composer_mode: 'agent' }),
      answer: (out) => String(out.additional_context),
    },
  },
  {
    agent: 'codex',
    settings: '.codex/hooks.json',
    env: () => ({}),
    stop: {
      event: 'Stop',
      command: (f) => claudeShapeCommand(f, 'Stop'),
      input: (root, session) => ({ session_id: session, turn_id: 't1', cwd: root, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done' }),
      answer: blockReason,
    },
    context: {
      event: 'SessionStart',
      command: (f) => claudeShapeCommand(f, 'SessionStart'),
      input: (root, session) => ({ session_id: session, cwd: root, hook_event_name: 'SessionStart', source: 'startup' }),
      answer: additionalContext('SessionStart'),
    },
  },
  {
    agent: 'gemini',
    settings: '.gemini/settings.json',
    env: (root) => ({ GEMINI_PROJECT_DIR: root }),
    stop: {
      event: 'AfterAgent',
      command: (f) => claudeShapeCommand(f, 'AfterAgent'),
      input: (root, session) => ({ session_id: session, transcript_path: path.join(root, 't.json'), cwd: root, hook_event_name: 'AfterAgent', timestamp: new Date().toISOString(), prompt: 'fix it', prompt_response: 'done', stop_hook_active: false }),
      answer: (out) => {
        expect(out.decision).toBe('deny')
        return String(out.reason)
      },
    },
    context: {
      event: 'BeforeAgent',
      command: (f) => claudeShapeCommand(f, 'BeforeAgent'),
      input: (root, session) => ({ session_id: session, transcript_path: path.join(root, 't.json'), cwd: root, hook_event_name: 'BeforeAgent', timestamp: new Date().toISOString(), prompt: 'next' }),
      answer: additionalContext('BeforeAgent'),
    },
  },
]

describe.each(CASES)('the $agent hooks init wrote', (c) => {
  it('tell a session each new annotation once, in the agent\'s own answer, and never one already acknowledged', { timeout: 90_000 }, async () => {
    const p = await setUp(c.agent)
    const settings = path.join(p.root, c.settings)
    const stop = c.stop.command(settings)
    const context = c.context.command(settings)
    const env = c.env(p.root)
    const run = async (command: string, input: Json) => {
      const r = await sh(command, p.root, JSON.stringify(input), env)
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toBe('')
      return r.stdout.trim() === '' ? undefined : (JSON.parse(r.stdout) as Json)
    }

    // Nothing pending (no store yet): no answer.
    expect(await run(stop, c.stop.input(p.root, 's1'))).toBeUndefined()

    const first = await annotate(p.store, 'Make the header sticky')
    const told = await run(stop, c.stop.input(p.root, 's1'))
    expect(told).toBeDefined()
    const text = c.stop.answer(told!)
    expect(text).toContain(first)
    expect(text).toContain('src/App.tsx:12')
    expect(text).toContain('Make the header sticky')

    // The same session stops again with nothing new: not blocked a second time.
    expect(await run(stop, { ...c.stop.input(p.root, 's1'), stop_hook_active: true, loop_count: 1 })).toBeUndefined()
    // Nor told it again at the next prompt.
    expect(await run(context, c.context.input(p.root, 's1'))).toBeUndefined()

    // A new one: told, alone.
    const second = await annotate(p.store, 'Footer links are grey on grey')
    const again = c.stop.answer((await run(stop, c.stop.input(p.root, 's1')))!)
    expect(again).toContain(second)
    expect(again).not.toContain(first)

    // Another session of the agent hears of both, as facts at its start; one acknowledged meanwhile is left out.
    await acknowledge(p.store, first)
    const facts = c.context.answer((await run(context, c.context.input(p.root, 's2')))!)
    expect(facts).toContain(second)
    expect(facts).not.toContain(first)
    expect(await run(stop, c.stop.input(p.root, 's2'))).toBeUndefined()
  })

  it('never breaks the turn: bad stdin exits 0 with a line on stderr and nothing on stdout', { timeout: 60_000 }, async () => {
    const p = await setUp(c.agent)
    await annotate(p.store, 'Anything')
    const r = await sh(c.stop.command(path.join(p.root, c.settings)), p.root, '{not json', c.env(p.root))
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/marginalia hook: .*not a JSON object/)
  })
})

describe('the Claude Code hooks under Cursor', () => {
  it('stay silent when Cursor runs them (Cursor reads .claude/settings.json too): its own hook tells it', { timeout: 60_000 }, async () => {
    const p = await setUp('claude')
    await annotate(p.store, 'Once only')
    const stop = claudeShapeCommand(path.join(p.root, '.claude', 'settings.json'), 'Stop')
    const r = await sh(stop, p.root, JSON.stringify({ conversation_id: 'c1', hook_event_name: 'stop', workspace_roots: [p.root], status: 'completed', loop_count: 0, cursor_version: '1.7.0' }), { CLAUDE_PROJECT_DIR: p.root })
    expect(r).toMatchObject({ code: 0, stdout: '' })
  })
})
