/**
 * The agent's work loop, written once: the server `instructions` and the `work_loop` prompt
 * both come from here, and both mention only the tools the server actually exposes.
 */

/** The numbered steps of the loop, for the tools in `toolNames`; focused on one session when `sessionId` is given. */
export function workLoopSteps(toolNames: readonly string[], sessionId?: string): string[] {
  const has = (n: string) => toolNames.includes(n)
  const scope = sessionId === undefined ? '' : ` with sessionId "${sessionId}"`
  const steps = [
    has('watch_annotations') && `watch_annotations${scope} — wait for what the person pointed at (returns at once if work is pending).`,
    has('acknowledge') && 'acknowledge — take one annotation before you start, so nobody else does it twice.',
    `Fix the code: the comment says what is wrong; the selector and text locate it, url is the page${has('get_annotation') ? ' (get_annotation has the HTML and every reply)' : ''}.`,
    (has('resolve') || has('dismiss') || has('reply')) &&
      'resolve with a short summary of the change — or reply to ask a question, or dismiss with a reason if it will not be done.',
    has('watch_annotations') && 'watch_annotations again.',
  ].filter((s): s is string => typeof s === 'string')
  return steps.map((step, i) => `${i + 1}. ${step}`)
}

export function instructionsFor(toolNames: readonly string[]): string {
  return [
    'Marginalia: a person annotates a running web app; you receive each annotation, fix the code, and answer in the page.',
    'Work loop:',
    ...workLoopSteps(toolNames),
    toolNames.includes('ask') && 'When something is unclear, ask asks the person on the annotation and waits for the answer (await_reply keeps waiting later).',
    toolNames.includes('watch_changes') && 'To follow replies and reopens as well as new work, use get_changes / watch_changes with the rev you last saw.',
    'Annotations are listed oldest first. A person may reopen an annotation; it then comes back as pending.',
    `Tools: ${toolNames.join(', ')}.`,
  ]
    .filter((line): line is string => typeof line === 'string')
    .join('\n')
}
