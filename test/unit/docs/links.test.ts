/**
 * Every relative link and every `#anchor` in README.md and docs/**\/*.md resolves: the file (or
 * folder) exists, and the anchor is a heading of the target page, slugged as GitHub does.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../../..')

function markdownFiles(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f).split(path.sep).join('/'))
  return ['README.md', ...docs.sort()]
}

/** The lines outside fenced code blocks, with inline code spans blanked (links and headings in code are text). */
function prose(markdown: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = []
  let fence: string | undefined
  markdown.split('\n').forEach((line, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined
      return
    }
    if (fence === undefined) out.push({ line, n: i + 1 })
  })
  return out
}

/** GitHub's heading anchor: lower case, punctuation dropped (not `-` or `_`), spaces to `-`. */
function slug(heading: string): string {
  const text = heading
    .replace(/<[^>]+>/g, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-')
}

/** The anchors a page offers: its headings' slugs, repeats numbered `-1`, `-2` as GitHub does. */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const { line } of prose(readFileSync(path.join(ROOT, file), 'utf8'))) {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)
    if (!m) continue
    const base = slug(m[1]!)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

interface Link {
  file: string
  n: number
  target: string
}

function linksOf(file: string): Link[] {
  const links: Link[] = []
  for (const { line, n } of prose(readFileSync(path.join(ROOT, file), 'utf8'))) {
    const text = line.replace(/`[^`]*`/g, '``')
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ file, n, target: m[1]! })
    for (const m of text.matchAll(/\b(?:href|src)="([^"]+)"/g)) links.push({ file, n, target: m[1]! })
  }
  return links.filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l.target))
}

/** What is wrong with a link, or undefined when it resolves. */
function problem(link: Link): string | undefined {
  const [rawPath, anchor] = link.target.split('#', 2) as [string, string | undefined]
  const target = rawPath === '' ? link.file : path.posix.normalize(path.posix.join(path.posix.dirname(link.file), decodeURI(rawPath)))
  if (target.startsWith('..')) return 'points outside the repository'
  const absolute = path.join(ROOT, target)
  if (!existsSync(absolute)) return `${target} does not exist`
  if (anchor === undefined) return undefined
  const page = statSync(absolute).isDirectory() ? path.posix.join(target, 'README.md') : target
  if (!page.endsWith('.md') || !existsSync(path.join(ROOT, page))) return `#${anchor}: ${target} is not a Markdown page`
  return anchorsOf(page).has(anchor) ? undefined : `#${anchor} is not a heading of ${page}`
}

describe('links in the README and docs/', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('Embedding: `openStore(options)`')).toBe('embedding-openstoreoptions')
    expect(slug('Team inbox on PostgreSQL')).toBe('team-inbox-on-postgresql')
    expect(slug('annotation.status_changed')).toBe('annotationstatus_changed')
    expect(slug("Responses sized for a model's context")).toBe('responses-sized-for-a-models-context')
    expect(slug('Is an agent there?')).toBe('is-an-agent-there')
    expect(slug('marginalia --help')).toBe('marginalia---help')
  })

  it('finds the links it checks', () => {
    const all = markdownFiles().flatMap(linksOf)
    expect(all.some((l) => l.file === 'README.md' && l.target === 'docs/guide/overlay.md#the-overlay')).toBe(true)
    expect(all.filter((l) => l.target.includes('#')).length).toBeGreaterThan(20)
  })

  it('every relative link and #anchor resolves', () => {
    const broken = markdownFiles()
      .flatMap(linksOf)
      .map((l) => ({ l, why: problem(l) }))
      .filter((b) => b.why !== undefined)
      .map(({ l, why }) => `${l.file}:${l.n}: (${l.target}) ${why}`)
    expect(broken).toEqual([])
  })
})
