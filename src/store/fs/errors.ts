/** The file adapter's errors: every refusal names the file, and a refused file is never changed. */
import { MarginaliaError, StoreDataError } from '../errors.js'

/** A store file that cannot be used as it is. The file is never overwritten or reset. */
export class StoreFileError extends MarginaliaError {
  readonly file: string
  constructor(file: string, problem: string, options?: ErrorOptions) {
    super('STORE_FILE', `${file}: ${problem}`, { file }, options)
    this.file = file
  }
}

export const UNTOUCHED = 'The file was left untouched.'

/**
 * The core's refusal of what the files hold (an event that does not fit the state), in the
 * file's words, so that every damaged file at open is a StoreFileError naming it.
 */
export function asFileError(error: unknown): unknown {
  if (!(error instanceof StoreDataError)) return error
  return new StoreFileError(error.location, `${error.problem}. ${UNTOUCHED}`, { cause: error })
}

export function isErrno(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code
}

export function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e)
}
