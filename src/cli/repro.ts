/** `marginalia repro ID`: an annotation's steps to reproduce as a Playwright Test file. */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { openStore } from '../store/index.js'
import { reproTest } from '../views/repro.js'
import { STORE_USAGE, storeFile, storeOption } from './args.js'
import { UsageError, log, type Command, type Values } from './command.js'
import { closeStore } from './lifecycle.js'

export const repro: Command = {
  oneShot: true,
  summary: "Write an annotation's steps to reproduce as a Playwright test that replays them",
  usage: [
    'marginalia repro ID [--out FILE] [--store FILE|URL]',
    '',
    'Prints a Playwright Test file (TypeScript) made from what the person did before annotating:',
    'it opens the first page they were on, replays each step (elements found by role and name',
    'first, then label, text and test id, CSS last) and ends asserting the annotated element is',
    "visible, the person's comment above it. Run it with npx playwright test against the running",
    'app; REPRO_BASE_URL=<origin> points it at another copy, and REPRO_STEP_<n> gives a value that',
    'was not recorded (a password, a masked field). The same file: GET /api/annotations/ID/repro.',
    '',
    '  marginalia repro a_12 --out e2e/repro-a_12.spec.ts && npx playwright test e2e/repro-a_12.spec.ts',
    '',
    'Options:',
    '  -o, --out FILE        write the test here instead of stdout (folders are made as needed)',
    `  -s, --store FILE|URL  the store to read: ${STORE_USAGE}`,
  ].join('\n'),
  options: { ...storeOption, out: { type: 'string', short: 'o' } },
  positionals: true,
  run,
}

async function run(values: Values, positionals: string[]): Promise<void> {
  const [id, ...rest] = positionals
  if (!id) throw new UsageError('repro needs the annotation id: marginalia repro ID (get_annotation and the inbox show it)')
  if (rest.length > 0) throw new UsageError(`repro takes one annotation id, not ${positionals.length}: ${positionals.join(' ')}`)
  const store = await openStore({ file: storeFile(values) })
  let text: string
  let steps: number
  try {
    const annotation = store.getAnnotation(id)
    text = reproTest(annotation)
    steps = annotation.steps?.length ?? 0
  } finally {
    await closeStore(store)
  }
  if (steps === 0) log(`${id} has no steps to reproduce (annotated before they were recorded, or the person dropped them): the test only opens its page and checks its element`)
  if (values.out === undefined) {
    process.stdout.write(text)
    return
  }
  const out = path.resolve(String(values.out))
  await fsp.mkdir(path.dirname(out), { recursive: true })
  await fsp.writeFile(out, text)
  log(`wrote ${out} (${steps} step${steps === 1 ? '' : 's'}): npx playwright test ${path.relative(process.cwd(), out) || out}`)
}
