/** The agent's open questions, at the top of the inbox, each with a box to answer it there. */
import { h, replace } from '../shared/dom.js'
import { clip, shortUrl } from '../shared/format.js'
import { messageBox, messageForm, timeEl } from '../shared/thread.js'
import type { Annotation, Reply, Session } from '../shared/types.js'

export class QuestionsPanel {
  constructor(
    private readonly element: HTMLElement,
    private readonly answer: (id: string, message: string) => void,
  ) {}

  /** Show `questions` (hidden when there are none); what is typed in a box survives. */
  render(questions: readonly { annotation: Annotation; question: Reply }[], sessions: ReadonlyMap<string, Session>): void {
    const box = this.element
    box.hidden = questions.length === 0
    const typed = new Map<string, string>()
    for (const t of box.querySelectorAll<HTMLTextAreaElement>('textarea[data-id]')) typed.set(t.dataset.id ?? '', t.value)
    if (questions.length === 0) return replace(box)
    replace(
      box,
      h('h2', {}, h('span', { class: 'q-badge', 'aria-hidden': 'true' }, '?'), `The agent is asking you (${questions.length})`),
      ...questions.map(({ annotation: a, question }) => {
        const session = sessions.get(a.sessionId)
        const answer = messageBox(`Answer the agent about: ${clip(a.comment, 60)}`, 'Your answer… (Ctrl+Enter to send, Esc to leave)', typed.get(a.id) ?? '', { 'data-id': a.id })
        answer.addEventListener('keydown', (e) => {
          if (e.key === 'Escape') {
            e.preventDefault()
            answer.blur()
          }
        })
        return h(
          'article',
          { class: 'question' },
          h('div', { class: 'q-text' }, question.message),
          h('div', { class: 'q-about' }, 'About ', h('q', {}, clip(a.comment, 140)), session ? ` on ${shortUrl(session.url)}` : '', ' · ', timeEl(question.createdAt)),
          messageForm({ class: 'q-form' }, answer, h('button', { type: 'submit', class: 'btn primary' }, 'Answer'), (message) => this.answer(a.id, message)),
        )
      }),
    )
  }
}
