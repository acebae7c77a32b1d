/**
 * The toolbar's freeze button (a snowflake): freezes and unfreezes the page (./freeze.ts, which comes with annotate
 * mode's chunk: `toggle` acts once it is here), and says which it did.
 */
import { h } from '../../shared/dom.js'
import { icon } from '../../shared/icons.js'

export function freezeButton(toggle: (done: (frozen: boolean) => void) => void, say: (text: string) => void): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'tool freeze-btn', 'aria-pressed': 'false', 'aria-label': 'Freeze the page', title: 'Freeze the page: pause animations, transitions and videos' }, icon('snowflake'))
  button.addEventListener('click', () =>
    toggle((frozen) => {
      button.setAttribute('aria-pressed', String(frozen))
      button.setAttribute('aria-label', frozen ? 'Unfreeze the page' : 'Freeze the page')
      say(frozen ? 'Page frozen: animations, transitions and videos paused.' : 'Page running again.')
    }),
  )
  return button
}
