/**
 * The comment box for a new annotation: what it is about (the element's selector and text, the
 * selected words), the comment, the intent and the severity. Send (or Ctrl+Enter) hands the owner
 * a ready `NewAnnotation`; Esc with text asks once before discarding it.
 */
import { INTENTS, LIMITS, SEVERITIES } from '../../../store/vocabulary.js'
import { h, replace } from '../../shared/dom.js'
import { clip } from '../../shared/format.js'
import { submitOnCtrlEnter } from '../../shared/thread.js'
import type { Intent, NewAnnotation, Severity, Step } from '../../shared/types.js'
import { StepList } from '../views/steps.js'
import type { Target } from './picker.js'
import { ImageTray } from '../../shared/image-tray.js'
import { pageLogEnabled } from '../../early/page-log.js'
import { labelOf } from '../anchor/names.js'
import { charCounter, type CharCounter } from '../views/long-text.js'
import { viewRect } from '../anchor/dom.js'
import { placePanel, rectBox } from '../views/layout.js'

export interface ComposerEvents {
  /** The person sent an annotation (the box closes right after). */
  send(body: NewAnnotation, extras: { target: Target; screenshot: boolean; pageLog: boolean; images: File[] }): void
  /** The box closed; `restoreFocus` when focus should go back where it was. */
  closed(restoreFocus: boolean): void
  /** The person turned the page log on or off (remembered for the site). */
  pageLog(on: boolean): void
  /** The steps to reproduce recorded so far (since the page loaded or the last annotation), shown as the box opens. */
  steps?(): Step[]
}

const DEFAULT_INTENT: Intent = 'fix'
const DEFAULT_SEVERITY: Severity = 'important'

export class Composer {
  readonly element: HTMLFormElement
  /** What the open box is about; undefined while closed. */
  target: Target | undefined
  private readonly about: HTMLDivElement
  private readonly text: HTMLTextAreaElement
  private readonly error: HTMLDivElement
  private discardArmed = false
  /** Pasted or dropped images, sent with the annotation. */
  readonly tray: ImageTray
  private readonly shot: HTMLInputElement
  private readonly log: HTMLInputElement
  /** Why a ticked Screenshot cannot be drawn on this page (its Content-Security-Policy), once known. */
  private readonly shotNote: HTMLElement
  private shotBlocked: string | undefined
  /** "9 412 / 10 000" near the limit; past it, the box keeps the text and says so. */
  private readonly counter: CharCounter
  /** The steps to reproduce, each of which the person may drop before sending. */
  readonly steps = new StepList()

  constructor(private readonly events: ComposerEvents) {
    this.about = h('div', { class: 'target' })
    this.text = h('textarea', {
      name: 'comment',
      'aria-label': 'Comment',
      placeholder: 'What should change here?',
      required: true,
      oninput: () => {
        this.discardArmed = false
        const problem = this.counter.problem()
        if (problem) this.showError(problem)
        else this.error.hidden = true
      },
    })
    this.error = h('div', { class: 'error', role: 'alert', hidden: true })
    this.counter = charCounter(this.text, LIMITS.comment)
    this.tray = new ImageTray((message) => this.showError(message))
    this.tray.bind(this.text)
    this.shot = h('input', { type: 'checkbox', name: 'screenshot', checked: screenshotDefault() })
    const shotToggle = h('label', { class: 'shot-toggle', title: 'Attach a picture of the element (remembered for this site)' }, this.shot, h('span', {}, 'Screenshot'))
    this.shotNote = h('div', { class: 'shot-note', role: 'note', hidden: true })
    this.shot.addEventListener('change', () => {
      remember(SHOT_KEY, this.shot.checked)
      this.renderShotNote()
    })
    this.log = h('input', { type: 'checkbox', name: 'page-log', checked: pageLogDefault() })
    const logToggle = h('label', { class: 'shot-toggle', title: "Attach what the page logged: console errors and warnings, failed requests (remembered for this site)" }, this.log, h('span', {}, 'Page log'))
    this.log.addEventListener('change', () => {
      remember(PAGE_LOG_KEY, this.log.checked)
      this.events.pageLog(this.log.checked)
    })
    const close = () => this.close(true)
    this.element = h(
      'form',
      { class: 'panel composer', role: 'dialog', 'aria-label': 'New annotation', hidden: true, novalidate: true, onsubmit: (e: Event) => this.submit(e) },
      h('div', { class: 'panel-head' }, h('div', { class: 'panel-title' }, 'New annotation'), h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Close', title: 'Close (Esc)', onclick: close }, '×')),
      h('div', { class: 'panel-body' }, this.about, this.text, this.tray.element, h('div', { class: 'toggles' }, shotToggle, logToggle), this.shotNote, this.steps.element, choice('intent', 'Intent', INTENTS, DEFAULT_INTENT), choice('severity', 'Severity', SEVERITIES, DEFAULT_SEVERITY), this.error),
      h(
        'div',
        { class: 'panel-foot' },
        h('span', { class: 'hint' }, 'Ctrl+Enter to send'),
        this.counter.element,
        h('span', { class: 'spacer' }),
        h('button', { type: 'button', class: 'btn', onclick: close }, 'Cancel'),
        h('button', { type: 'submit', class: 'btn primary' }, 'Send'),
      ),
    )
    submitOnCtrlEnter(this.text, this.element)
    // Ctrl/Cmd+Enter sends from anywhere in the box (a toggle, a radio button), as its footer says.
    this.element.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.defaultPrevented) {
        e.preventDefault()
        this.element.requestSubmit()
      }
    })
  }

  /** Open the box for `target`. Already open, it keeps what was typed and only changes the target. */
  open(target: Target): void {
    if (!this.target) {
      this.text.value = ''
      this.counter.update()
      this.check('intent', DEFAULT_INTENT)
      this.check('severity', DEFAULT_SEVERITY)
      this.tray.clear()
      this.shot.checked = screenshotDefault()
      this.log.checked = pageLogDefault()
      this.renderShotNote()
      this.steps.set(this.events.steps?.() ?? [])
    }
    this.target = target
    this.discardArmed = false
    this.error.hidden = true
    const { info } = target
    replace(
      this.about,
      h('span', { class: 'label', title: info.selector }, labelOf(info)),
      target.extra?.length ? h('span', { class: 'snippet' }, ` + ${target.extra.length} more`) : null,
    )
    this.element.querySelector('blockquote')?.remove()
    if (target.selectedText) this.about.after(h('blockquote', { class: 'selected', 'aria-label': 'Selected text' }, clip(target.selectedText, 600)))
    this.element.hidden = false
  }

  focus(): void {
    this.text.focus()
  }

  /** Shift-click: the open box's target with one more element (or without it, when it was there). */
  withMore(target: Target): Target {
    const open = this.target
    if (!open) return target
    const extra = (open.extra ?? []).filter((x) => x.element !== target.element)
    if (target.element === open.element) return open
    if (extra.length === (open.extra ?? []).length) extra.push({ element: target.element, info: target.info })
    return { ...open, extra: extra.slice(0, LIMITS.elements) }
  }

  /** Beside what it is about (above the dock's `reserve`); returns the boxes to outline on the page. */
  place(reserve: number): DOMRect[] {
    const target = this.target
    if (!target) return []
    const r = target.rect ?? viewRect(target.element)
    const outlined = target.element.isConnected ? [r] : []
    for (const x of target.extra ?? []) if (x.element.isConnected) outlined.push(viewRect(x.element))
    placePanel(this.element, rectBox(r), reserve)
    return outlined
  }


  /** The page cannot have screenshots drawn: say so under the toggles while Screenshot is ticked. */
  setShotNote(message: string | undefined): void {
    this.shotBlocked = message
    this.renderShotNote()
  }

  private renderShotNote(): void {
    this.shotNote.textContent = this.shotBlocked ?? ''
    this.shotNote.hidden = !this.shotBlocked || !this.shot.checked
  }

  close(restoreFocus: boolean): void {
    if (!this.target) return
    this.target = undefined
    this.element.hidden = true
    this.discardArmed = false
    this.events.closed(restoreFocus)
  }

  /** Esc: with text in the box, the first asks and the second discards. */
  escape(): void {
    if (this.text.value.trim() !== '' && !this.discardArmed) {
      this.discardArmed = true
      this.showError('Press Esc again to discard this comment.')
    } else this.close(true)
  }

  private check(name: 'intent' | 'severity', value: string): void {
    for (const input of this.element.querySelectorAll<HTMLInputElement>(`input[name="${name}"]`)) input.checked = input.value === value
  }

  private showError(message: string): void {
    this.error.textContent = message
    this.error.hidden = false
  }

  private submit(e: Event): void {
    e.preventDefault()
    const target = this.target
    if (!target) return
    const comment = this.text.value.trim()
    if (comment === '') {
      this.showError('Write a comment first.')
      this.text.focus()
      return
    }
    const tooLong = this.counter.problem()
    if (tooLong) {
      this.showError(tooLong)
      this.text.focus()
      return
    }
    const data = new FormData(this.element)
    const body: NewAnnotation = {
      comment: clip(comment, LIMITS.comment),
      url: clip(location.href, LIMITS.url),
      element: target.info,
      intent: (data.get('intent') as Intent | null) ?? DEFAULT_INTENT,
      severity: (data.get('severity') as Severity | null) ?? DEFAULT_SEVERITY,
      viewport: { width: Math.round(window.innerWidth), height: Math.round(window.innerHeight) },
    }
    if (target.selectedText) body.selectedText = clip(target.selectedText, LIMITS.selectedText)
    if (target.extra?.length) body.elements = target.extra.map((x) => x.info)
    if (target.area) body.area = target.area
    const steps = this.steps.kept()
    if (steps.length > 0) body.steps = steps
    this.events.send(body, { target, screenshot: this.shot.checked, pageLog: this.log.checked, images: this.tray.images })
    this.tray.clear()
    this.close(true)
  }
}

/** A row of radio buttons. */
function choice(name: string, legend: string, values: readonly string[], checked: string): HTMLFieldSetElement {
  return h(
    'fieldset',
    {},
    h('legend', {}, legend),
    h('div', { class: 'seg' }, ...values.map((v) => h('label', {}, h('input', { type: 'radio', name, value: v, checked: v === checked }), h('span', {}, v)))),
  )
}

const SHOT_KEY = 'marginalia:screenshot'
/** The page-log toggle: the key `pageLogEnabled` reads when the overlay loads. */
const PAGE_LOG_KEY = 'marginalia:page-log'
const pageLogDefault = pageLogEnabled
/** The screenshot toggle, remembered per origin (on unless turned off here). */
function screenshotDefault(): boolean {
  try {
    return localStorage.getItem(SHOT_KEY) !== 'off'
  } catch {
    return true
  }
}
function remember(key: string, on: boolean): void {
  try {
    localStorage.setItem(key, on ? 'on' : 'off')
  } catch {
    // not remembered
  }
}
