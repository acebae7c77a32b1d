/**
 * The page log and the steps' recorder as the overlay gets them. overlay.js starts them itself
 * ({@link installRecorders}); `overlay-after-loader.js`, which loader.js loads after starting them,
 * takes the ones running ({@link runningRecorders}) and holds none of their code.
 */
import { installPageLog, pageLogEnabled, runningPageLog, type PageLogHandle } from '../early/page-log.js'
import { installSteps, runningSteps, stepsEnabled, type StepsHandle } from '../early/steps.js'

export interface Recorders {
  /** The page log (unless turned off for this origin, or `force`: the person turned it on), not logging the requests `ignore` names. */
  pageLog(ignore: (url: string) => boolean, force?: boolean): PageLogHandle | undefined
  /** The steps' recorder, unless turned off for this origin. */
  steps(): StepsHandle | undefined
}

/** Started here (or the early recorder's, when it ran). */
export const installRecorders: Recorders = {
  pageLog: (ignore, force) => (force || pageLogEnabled() ? installPageLog(window, ignore) : undefined),
  steps: () => (stepsEnabled() ? installSteps(window) : undefined),
}

/**
 * The ones loader.js started: a page log it did not start (turned off at load, then on in the
 * comment box) starts with the next page load.
 */
export const runningRecorders: Recorders = {
  pageLog: (ignore) => runningPageLog(window, ignore),
  steps: () => runningSteps(window),
}
