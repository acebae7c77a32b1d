/**
 * The `marginalia` command's entry. `--version` loads nothing but the version (a version check
 * costs about a bare Node start); `hook` loads only its own small module (an agent runs it at every
 * turn: push/hook.ts); everything else loads the commands (dispatch.ts).
 */
const argv = process.argv.slice(2)
if (argv[0] === '-v' || argv[0] === '--version') {
  const { VERSION } = await import('../version.js')
  process.stdout.write(VERSION + '\n')
} else if (argv[0] === 'hook' && !argv.includes('--help') && !argv.includes('-h')) {
  const { runHookProcess } = await import('./push/hook.js')
  await runHookProcess(argv.slice(1))
} else {
  const { main } = await import('./dispatch.js')
  const code = await main(argv)
  if (code >= 0) process.exitCode = code
}
