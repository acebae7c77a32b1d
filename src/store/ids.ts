/** Record ids: the store asks for one per new session, annotation and reply. */
import { randomBytes } from 'node:crypto'

export type IdKind = 'session' | 'annotation' | 'reply' | 'identity' | 'capture'

const ID_PREFIX: Record<IdKind, string> = { session: 'ses', annotation: 'ann', reply: 'rep', identity: 'idn', capture: 'cap' }
let idSeq = 0
let entropy = Buffer.alloc(0)
let entropyAt = 0

/** Time-ordered, unique ids: `ann_<time><seq><random>`; sorting by id follows creation order within a process. */
export function defaultIds(kind: IdKind): string {
  idSeq = (idSeq + 1) % 36 ** 3
  if (entropyAt + 5 > entropy.length) {
    entropy = randomBytes(4096)
    entropyAt = 0
  }
  const random = entropy.toString('hex', entropyAt, (entropyAt += 5))
  return `${ID_PREFIX[kind]}_${Date.now().toString(36).padStart(9, '0')}${idSeq.toString(36).padStart(3, '0')}${random}`
}
