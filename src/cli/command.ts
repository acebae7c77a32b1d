/** What every `marginalia` command is made of. stdout of `marginalia mcp` is the protocol: logs go to stderr. */
import type { ParseArgsConfig } from 'node:util'

export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>

export interface Command {
  /** Runs to completion (otherwise it serves until stopped). */
  oneShot?: boolean
  /** One line for `marginalia --help`. */
  summary: string
  /** The whole of `marginalia <command> --help`; its first line is the usage line. */
  usage: string
  options: NonNullable<ParseArgsConfig['options']>
  /** Takes words besides options (`people add "Alice Martin"`). */
  positionals?: boolean
  run(values: Values, positionals: string[]): Promise<void>
}

/** A mistake in the command line: exit code 2 instead of 1. */
export class UsageError extends Error {}

export function log(message: string): void {
  process.stderr.write(`marginalia: ${message}\n`)
}
