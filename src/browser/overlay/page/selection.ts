/**
 * The page's text selection as a range of its own, read at once: a press on the toolbar's
 * Annotate button clears the selection by the time the click (and the annotate chunk) comes.
 */
export function selectedRange(): Range | undefined {
  const selection = document.getSelection()
  if (!selection || selection.isCollapsed || selection.rangeCount === 0) return undefined
  return selection.getRangeAt(0).cloneRange()
}
