/**
 * Progress of long work on stderr (stdout may be the data). On a terminal: one line redrawn in
 * place, `events  [########------------]  40%  40 000/100 000`. Elsewhere (CI logs, pipes): a
 * line at each quarter, so logs stay short. Small totals print nothing.
 */
export interface ProgressBar {
  update(label: string, done: number, total: number): void
  done(): void
}

export function progressBar(stream: NodeJS.WriteStream = process.stderr, minTotal = 2000): ProgressBar {
  const tty = stream.isTTY === true
  let shown = ''
  let lastQuarter = new Map<string, number>()
  let drawn = false
  return {
    update(label, done, total) {
      if (total < minTotal) return
      const ratio = total === 0 ? 1 : Math.min(1, done / total)
      if (tty) {
        const width = 24
        const filled = Math.round(ratio * width)
        const line = `${label.padEnd(11)} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%  ${fmt(done)}/${fmt(total)}`
        if (line !== shown) {
          stream.write(`\r${line}\x1b[K`)
          shown = line
          drawn = true
        }
        return
      }
      const quarter = Math.floor(ratio * 4)
      if (quarter > (lastQuarter.get(label) ?? 0)) {
        lastQuarter.set(label, quarter)
        stream.write(`marginalia: ${label} ${quarter * 25}% (${fmt(done)}/${fmt(total)})\n`)
      }
    },
    done() {
      if (tty && drawn) stream.write('\n')
      drawn = false
      shown = ''
      lastQuarter = new Map()
    },
  }
}

const fmt = (n: number): string => n.toLocaleString('en-US').replace(/,/g, ' ')
