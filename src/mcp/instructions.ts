/**
 * The agent's work loop, written once: the server `instructions` and the `work_loop` prompt
 * both come from here, and both mention only the tools the server actually exposes. They do not
 * repeat the tool list (the client has tools/list); they say what the list cannot: the order of
 * work, what each intent asks for, the one way to ask, and how long a wait may be.
 */
/** The numbered steps of the loop, for the tools in `toolNames`; focused on one session when `sessionId` is given. */
export function workLoopSteps(toolNames: readonly string[], sessionId?: string): string[] {
  const has = (n: string) => toolNames.includes(n)
  const scope = sessionId === undefined ? '' : ` with sessionId "${sessionId}"`
  const finish = has('resolve') ? (has('reply') ? 'answer with reply, then resolve' : 'resolve with the answer') : 'answer it'
  const steps = [
    has('watch_annotations') && `watch_annotations${scope} — wait for work (answers at once if some is pending). Take blocking ones first, then the oldest.`,
    has('acknowledge') && 'acknowledge — take one before you start, so nobody does it twice.',
    `Fix the code by intent: fix/change → edit the code; question → ${finish}${has('resolve') ? '; approve → resolve' : ''}. ` +
      'Open the source location first when the annotation has one, and look at the screenshot when there is one; ' +
      `otherwise the selector, text and url locate it${has('get_annotation') ? ' (get_annotation has the whole record)' : ''}.`,
    (has('resolve') || has('dismiss')) &&
      [has('resolve') && 'resolve with a short summary of what you changed', has('dismiss') && 'dismiss with a reason if it will not be done'].filter(Boolean).join(' — or ') + '.',
    has('watch_annotations') && 'watch_annotations again. A reopened annotation comes back as pending: read the latest reply first.',
  ].filter((s): s is string => typeof s === 'string')
  return steps.map((step, i) => `${i + 1}. ${step}`)
}

/** How to ask, and how long to wait: the same words in the instructions and the prompt. */
export function workLoopRules(toolNames: readonly string[]): string[] {
  const has = (n: string) => toolNames.includes(n)
  return [
    has('ask') && `Unclear? ask once (it waits for the answer); after its timeout call await_reply — never ask twice.`,
    'A wait ends before clients time out (55 s by default); an empty answer says how to continue, missing nothing.',
    has('watch_changes') && 'To follow replies and reopens too, use watch_changes with sinceRev = the rev of your last result.',
  ].filter((s): s is string => typeof s === 'string')
}

export function instructionsFor(toolNames: readonly string[]): string {
  return [
    'Marginalia: a person annotates a running web app; you fix what they point at and answer in the page.',
    'Work loop:',
    ...workLoopSteps(toolNames),
    ...workLoopRules(toolNames),
  ].join('\n')
}
