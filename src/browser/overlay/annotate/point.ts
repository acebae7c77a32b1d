/**
 * The agent asks the person to point (`ask { point: true }`): the overlay turns to annotate mode
 * with the question said in the toolbar; the person's pick opens the comment box as usual, and
 * what they send answers the question — the element as the overlay describes it, its source
 * location, a screenshot and the words typed — instead of becoming a new annotation.
 */
import type { Api } from '../../shared/api.js'
import type { Annotation, NewAnnotation, Reply } from '../../shared/types.js'
import type { complete } from '../chunks/extras.js'
import type { Target } from './picker.js'

export interface PointDeps {
  api: Api
  host: Element
  budgetMs: number | undefined
  /** The annotation with its source location and screenshot (chunks/load.ts: the `extras` chunk, fetched by the core). */
  complete: typeof complete
  /** Turn annotate mode on. */
  annotate(): void
  say(text: string): void
  /** The answer came back: the fresh record. */
  answered(a: Annotation): void
}

export class Pointing {
  private asked: { annotationId: string; question: string } | undefined

  constructor(private readonly deps: PointDeps) {}

  get active(): boolean {
    return this.asked !== undefined
  }

  /** An agent's question on `a` asks the person to point. */
  start(a: Annotation, question: Reply): void {
    this.asked = { annotationId: a.id, question: question.message }
    this.deps.annotate()
    this.deps.say(`The agent asks you to point: ${question.message} Click the element.`)
  }

  /** The person picked and wrote: the answer, with the element and its screenshot. */
  async answer(body: NewAnnotation, target: Target): Promise<void> {
    const asked = this.asked
    if (!asked) return
    this.asked = undefined
    this.deps.say('Sending your answer…')
    const { body: full } = await this.deps.complete(body, target, { api: this.deps.api, screenshot: true, images: [], log: undefined, exclude: this.deps.host, budgetMs: this.deps.budgetMs, blocked: () => {} })
    const pointed = { ...(full.element ? { element: full.element } : {}), ...(full.source ? { source: full.source } : {}) }
    try {
      this.deps.answered(await this.deps.api.reply(asked.annotationId, body.comment, full.attachments, pointed))
      this.deps.say('Answer sent: the agent sees the element you pointed at.')
    } catch {
      this.asked = asked
      this.deps.say('Your answer could not be sent; point again.')
    }
  }
}
