import { appendFileSync, mkdirSync } from 'node:fs'
import path from 'node:path'

const FILE = path.resolve(import.meta.dirname, 'results', 'latest.jsonl')

/** Print a stress figure and keep it in stress/results/latest.jsonl (not committed). */
export function report(name: string, figures: unknown): void {
  const line = JSON.stringify({ name, at: new Date().toISOString(), figures })
  console.log(`STRESS ${line}`)
  mkdirSync(path.dirname(FILE), { recursive: true })
  appendFileSync(FILE, line + '\n')
}
