/**
 * The thread panel: one annotation's comment, what it is about, its replies (the agent's open
 * question stands out), a reply box, Reopen and Delete. A live update re-renders it without
 * losing what the person is typing or where the focus is.
 */
import { sourceView } from '../../shared/source.js'
import { UnreachableError, describeError } from '../../shared/api.js'
import { h, replace } from '../../shared/dom.js'
import { STATUS_LABEL, clip, openQuestionOf } from '../../shared/format.js'
import { confirmButton, messageBox, messageForm, replyList, timeEl, typedMessage } from '../../shared/thread.js'
import type { Annotation, Attachment } from '../../shared/types.js'
import { attachmentStrip, pageContextView } from '../../shared/attachments-view.js'
import { ImageTray } from '../../shared/image-tray.js'
import type { Uploader } from '../../shared/api.js'
import type { Links } from '../../shared/links.js'
import { labelOf } from '../anchor/names.js'
import { composedSelector, frameOffset, viewRect } from '../anchor/dom.js'
import type { Anchor } from '../anchor/resolve.js'
import { placePanel, rectBox, union, type Box } from './layout.js'
import { LIMITS } from '../../../store/vocabulary.js'
import { charCounter, foldable } from './long-text.js'

export interface ThreadEvents {
  reply(id: string, message: string, attachments?: Attachment[]): Promise<void>
  /** Reopen; a typed reply goes with it. */
  reopen(id: string, message: string | undefined): Promise<void>
  remove(id: string): Promise<void>
  close(): void
  /** "Copy as Markdown": this annotation. */
  copy?(a: Annotation): void
  /** A request failed because the server could not be reached. */
  unreachable(): void
}

export class ThreadPanel {
  readonly element = h('section', { class: 'panel thread', role: 'dialog', 'aria-label': 'Annotation thread', hidden: true, tabindex: -1 })
  /** The annotation shown; undefined while closed. */
  openId: string | undefined
  private tray: ImageTray | undefined
  private trayFor: string | undefined
  /** Long texts the person unfolded ("id:comment", "id:reply:3"): they stay unfolded across re-renders. */
  private readonly unfolded = new Set<string>()

  constructor(
    /** Where focus is read from (the overlay's shadow root). */
    private readonly root: DocumentOrShadowRoot,
    private readonly events: ThreadEvents,
    /** Where pasted images go. */
    private readonly uploader: Uploader,
    /** Where images and source links point. */
    private readonly links: Links,
  ) {
    // Ctrl/Cmd+Enter sends the reply from anywhere in the panel, not only from its box.
    this.element.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter' || !(e.ctrlKey || e.metaKey) || e.defaultPrevented) return
      const form = this.element.querySelector<HTMLFormElement>('.reply-form')
      if (!form) return
      e.preventDefault()
      form.requestSubmit()
    })
  }

  /** The reply box as it is now (a re-render replaces it): emptied once what it held was sent. */
  private clearBox(): void {
    const box = this.element.querySelector<HTMLTextAreaElement>('.reply-form textarea')
    if (box) {
      box.value = ''
      box.dispatchEvent(new Event('input'))
    }
  }

  /** Show annotation `a` (number `n`) with an empty reply box, and focus the box when the agent asks something. */
  open(a: Annotation, n: number): void {
    this.openId = a.id
    this.element.hidden = false
    this.render(a, n, true)
  }

  /** Focus what the person most likely wants: the answer box when the agent asks, else the panel. */
  focus(a: Annotation): void {
    const box = openQuestionOf(a) ? this.element.querySelector('textarea') : null
    ;(box ?? this.element).focus()
  }


  /**
   * Beside its element and pin (`openPin`), so the panel never hides what it talks about. Returns
   * what to mark on the page: the element's box to outline, or the quoted words' boxes.
   */
  place(anchor: Anchor | undefined, openPin: Box | undefined, reserve: number): { outlined: DOMRect[]; words: DOMRect[] } {
    const r = anchor?.element ? viewRect(anchor.element) : undefined
    let words: DOMRect[] = []
    const outlined: DOMRect[] = []
    if (anchor?.range) {
      const o = frameOffset(anchor.range.startContainer.ownerDocument ?? document)
      words = [...anchor.range.getClientRects()].map((w) => new DOMRect(w.x + o.x, w.y + o.y, w.width, w.height))
    } else if (r) outlined.push(r)
    const box = r ? rectBox(r) : undefined
    placePanel(this.element, box && openPin ? union(box, openPin) : (openPin ?? box), reserve)
    return { outlined, words }
  }

  close(): void {
    this.openId = undefined
    this.element.hidden = true
    replace(this.element)
  }

  /** Build the panel for `a`. Unless `fresh`, the reply box keeps its text and focus and the replies stay scrolled to the end. */
  render(a: Annotation, n: number, fresh = false): void {
    const draft = fresh ? '' : (this.element.querySelector<HTMLTextAreaElement>('.reply-form textarea')?.value ?? '')
    const hadFocus = !fresh && this.root.activeElement?.closest('.reply-form') != null
    const question = openQuestionOf(a)
    const error = h('div', { class: 'error', role: 'alert', hidden: true })
    const fail = (e: unknown) => {
      error.textContent = e instanceof UnreachableError ? `${e.message} Nothing was lost: try again when it is back.` : describeError(e)
      error.hidden = false
      if (e instanceof UnreachableError) this.events.unreachable()
    }
    // No maxlength: a pasted text past the limit stays whole and the counter says so.
    const box = messageBox(question ? 'Answer the agent' : 'Reply', question ? 'Answer the agent…' : 'Reply…', draft, { maxlength: null })
    const counter = charCounter(box, LIMITS.message, 'reply')
    counter.update()
    // Images pasted or dropped into the reply box: kept across re-renders of the same thread.
    if (this.trayFor !== a.id) {
      this.tray = new ImageTray((message) => fail(new Error(message)))
      this.trayFor = a.id
    }
    const tray = this.tray!
    tray.bind(box)
    const send = h('button', { type: 'submit', class: 'btn primary' }, question ? 'Answer' : 'Reply')
    const form = messageForm({ class: 'reply-form' }, box, h('div', { class: 'row' }, tray.element, h('span', { class: 'hint' }, 'Ctrl+Enter to send'), counter.element, h('span', { class: 'spacer' }), send), async () => {
      const tooLong = counter.problem()
      if (tooLong) return fail(new Error(tooLong))
      const message = box.value.trim()
      send.disabled = true
      try {
        const images = tray.images
        const attachments = images.length > 0 ? await Promise.all(images.map((f) => this.uploader.upload(f, 'image'))) : undefined
        await this.events.reply(a.id, message, attachments)
        // The reply re-rendered the panel (its box restored as a draft): empty the box now shown.
        this.clearBox()
        tray.clear()
      } catch (err) {
        fail(err)
      } finally {
        send.disabled = false
      }
    })
    const reopen = async () => {
      const tooLong = counter.problem()
      if (tooLong) return fail(new Error(tooLong))
      try {
        await this.events.reopen(a.id, typedMessage(box))
        this.clearBox()
      } catch (err) {
        fail(err)
      }
    }
    replace(
      this.element,
      h(
        'div',
        { class: 'panel-head' },
        h('span', { class: 'num', 'data-status': a.status, 'aria-hidden': 'true' }, n),
        h('div', { class: 'panel-title', id: 'mg-thread-title' }, `Annotation #${n}`),
        h('span', { class: 'chip', 'data-status': a.status }, STATUS_LABEL[a.status]),
        h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Close', title: 'Close (Esc)', onclick: () => this.events.close() }, '×'),
      ),
      h(
        'div',
        { class: 'panel-body' },
        foldable(h('p', { class: 'comment' }, a.comment), a.comment, `${a.id}:comment`, this.unfolded),
        h(
          'div',
          { class: 'tags' },
          a.intent ? h('span', { class: 'tag' }, a.intent) : null,
          a.severity ? h('span', { class: 'tag', 'data-severity': a.severity }, a.severity) : null,
          h('span', { class: 'meta' }, ...(a.by ? [h('span', { class: 'by' }, `${a.by.name} · `)] : []), timeEl(a.createdAt)),
        ),
        a.element ? h('div', { class: 'meta' }, h('span', { class: 'label', title: clip(composedSelector(a.element), 400) }, labelOf(a.element)), a.elements?.length ? ` + ${a.elements.length} more` : null) : null,
        a.source ? h('div', { class: 'meta mono' }, sourceView(a.source, this.links.editor)) : null,
        // The quoted words in full (the panel scrolls), never squashed by the replies below.
        a.selectedText ? h('blockquote', { class: 'selected full' }, a.selectedText) : null,
        attachmentStrip(a.attachments, this.links.attachments),
        pageContextView(a.context),
        this.foldReplies(a, replyList(a, this.links.attachments)) ?? h('div', { class: 'empty' }, a.status === 'pending' ? 'No replies yet. The agent will answer here.' : 'No replies.'),
        form,
        error,
      ),
      h(
        'div',
        { class: 'panel-foot' },
        this.events.copy ? h('button', { type: 'button', class: 'btn copy-md', title: 'Copy this annotation as Markdown (element, source, comment, status, thread)', onclick: () => this.events.copy?.(a) }, 'Copy') : null,
        a.status === 'pending' ? null : h('button', { type: 'button', class: 'btn', title: 'Send it back to the agent (a typed reply goes with it)', onclick: () => void reopen() }, 'Reopen'),
        h('span', { class: 'spacer' }),
        confirmButton('Delete', 'Confirm delete', () => void this.events.remove(a.id).catch(fail)),
      ),
    )
    this.element.setAttribute('aria-labelledby', 'mg-thread-title')
    if (hadFocus) box.focus()
    const body = this.element.querySelector('.panel-body')
    if (body && !fresh) body.scrollTop = body.scrollHeight
  }

  /** Long replies fold like the comment. */
  private foldReplies(a: Annotation, list: HTMLOListElement | null): HTMLOListElement | null {
    list?.querySelectorAll<HTMLElement>(':scope > .reply > p').forEach((p, i) => {
      const text = a.replies[i]?.message ?? p.textContent ?? ''
      const placeholder = document.createComment('')
      p.replaceWith(placeholder)
      placeholder.replaceWith(foldable(p, text, `${a.id}:reply:${i}`, this.unfolded))
    })
    return list
  }
}
