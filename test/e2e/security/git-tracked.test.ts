/**
 * A `.marginalia/` folder committed to git is how a repository plants files in the store (and how a
 * person's annotations leak into a repository). `marginalia doctor` and the start-up log of
 * `serve` and `mcp` warn when git tracks anything in it; without git, or untracked, they say nothing.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { diagnose } from '../../../src/cli/doctor.js'
import { runCli } from '../../helpers/cli.js'
import { tempDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' } })

/** A temp project with a store; `tracked`: git tracks `.marginalia/store.json`; `repo`: it is a git repository at all. */
function project({ repo, tracked }: { repo: boolean; tracked: boolean }) {
  const t = tempDir('marginalia-git-')
  cleanups.push(t.cleanup)
  writeFileSync(path.join(t.dir, 'package.json'), '{"name":"app"}\n')
  mkdirSync(path.dirname(t.file))
  writeFileSync(t.file, JSON.stringify({ format: 'marginalia-store', version: 1, rev: 0, sessions: [], annotations: [], recentEvents: [] }))
  if (repo) {
    git(t.dir, 'init', '-q')
    if (tracked) git(t.dir, 'add', '-f', '.marginalia/store.json')
  }
  return t
}

const WARNING = /\.marginalia\/? is tracked by git/

describe('a store folder tracked by git is warned about', () => {
  it('doctor warns, naming a tracked file and the fix', async () => {
    const t = project({ repo: true, tracked: true })
    const checks = await diagnose({ store: t.file, port: 9, origin: 'http://localhost:5173', root: t.dir })
    const check = checks.find((c) => WARNING.test(c.detail))
    expect(check?.status).toBe('warn')
    expect(check?.detail).toContain('.marginalia/store.json')
    expect(check?.fix).toMatch(/\.gitignore.*git rm -r --cached/)
  })

  it('doctor says nothing of git when the folder is not tracked, or there is no repository', async () => {
    for (const options of [{ repo: true, tracked: false }, { repo: false, tracked: false }]) {
      const t = project(options)
      const checks = await diagnose({ store: t.file, port: 9, origin: 'http://localhost:5173', root: t.dir })
      expect(checks.filter((c) => WARNING.test(c.detail))).toEqual([])
    }
  })

  it('marginalia mcp warns on stderr at start-up (stdout stays the protocol)', async () => {
    const t = project({ repo: true, tracked: true })
    const run = await runCli(['mcp'], t.dir)
    expect(run.code).toBe(0)
    expect(run.stderr).toMatch(WARNING)
    expect(run.stdout).not.toMatch(WARNING)
  })

  it('marginalia mcp says nothing of git in an untracked project', async () => {
    const t = project({ repo: true, tracked: false })
    const run = await runCli(['mcp'], t.dir)
    expect(run.code).toBe(0)
    expect(run.stderr).not.toMatch(WARNING)
  })
})
