/**
 * Pasted or dropped images waiting to be sent with a message: thumbnails with a remove button.
 * Used by the composer and the reply boxes (overlay thread panel and inbox cards).
 */
import { h, replace } from './dom.js'

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const
const MAX_IMAGE_BYTES = 5 * 1024 * 1024
export const MAX_IMAGES = 5

/** Which of `files` may be attached (type and size), and why the others may not. */
function acceptImages(files: readonly File[], already: number): { ok: File[]; refused: string[] } {
  const ok: File[] = []
  const refused: string[] = []
  for (const f of files) {
    if (!(IMAGE_TYPES as readonly string[]).includes(f.type)) refused.push(`${f.name || 'file'}: not a PNG, JPEG, WebP or GIF image`)
    else if (f.size > MAX_IMAGE_BYTES) refused.push(`${f.name || 'image'}: larger than 5 MB`)
    else if (already + ok.length >= MAX_IMAGES) refused.push(`${f.name || 'image'}: at most ${MAX_IMAGES} images per message`)
    else ok.push(f)
  }
  return { ok, refused }
}

export class ImageTray {
  readonly element: HTMLDivElement
  private files: File[] = []
  private urls: string[] = []

  constructor(private readonly onRefused: (message: string) => void = () => {}) {
    this.element = h('div', { class: 'image-tray', hidden: true, 'aria-label': 'Images to send' })
  }

  /** Listen for paste and drop on `target` (a textarea or a form). */
  bind(target: HTMLElement): void {
    target.addEventListener('paste', (e: ClipboardEvent) => {
      const files = [...(e.clipboardData?.files ?? [])]
      if (files.length === 0) return
      e.preventDefault()
      this.add(files)
    })
    target.addEventListener('dragover', (e: DragEvent) => {
      if (e.dataTransfer?.types.includes('Files')) e.preventDefault()
    })
    target.addEventListener('drop', (e: DragEvent) => {
      const files = [...(e.dataTransfer?.files ?? [])]
      if (files.length === 0) return
      e.preventDefault()
      this.add(files)
    })
  }

  add(files: readonly File[]): void {
    const { ok, refused } = acceptImages(files, this.files.length)
    this.files.push(...ok)
    if (refused.length > 0) this.onRefused(refused.join('; '))
    this.render()
  }

  get images(): File[] {
    return [...this.files]
  }

  clear(): void {
    this.files = []
    this.render()
  }

  private render(): void {
    for (const u of this.urls) URL.revokeObjectURL(u)
    this.urls = this.files.map((f) => URL.createObjectURL(f))
    replace(
      this.element,
      ...this.files.map((f, i) =>
        h(
          'span',
          { class: 'thumb' },
          h('img', { src: this.urls[i]!, alt: f.name || 'pasted image' }),
          h('button', { type: 'button', class: 'icon-btn remove', 'aria-label': `Remove ${f.name || 'image'}`, onclick: () => this.remove(i) }, '×'),
        ),
      ),
    )
    this.element.hidden = this.files.length === 0
  }

  private remove(i: number): void {
    this.files.splice(i, 1)
    this.render()
  }
}
