/**
 * Every `marginalia` command by name, in the order `marginalia --help` lists them (the reference is
 * generated from it too). Each is loaded when it runs: `marginalia mcp` loads the MCP server and the
 * store, not `serve`'s HTTP server, `init`'s parsers or the other commands.
 */
import type { Command } from './command.js'

export const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  init: async () => (await import('./init.js')).init,
  doctor: async () => (await import('./doctor.js')).doctor,
  mcp: async () => (await import('./mcp.js')).mcp,
  serve: async () => (await import('./serve.js')).serve,
  dev: async () => (await import('./dev.js')).dev,
  archive: async () => (await import('./archive.js')).archive,
  migrate: async () => (await import('./migrate.js')).migrate,
  reset: async () => (await import('./reset.js')).reset,
  export: async () => (await import('./transfer.js')).exportCommand,
  import: async () => (await import('./transfer.js')).importCommand,
  people: async () => (await import('./team.js')).people,
  agents: async () => (await import('./team.js')).agents,
  revoke: async () => (await import('./team.js')).revoke,
  webhooks: async () => (await import('./webhooks.js')).webhooks,
  extension: async () => (await import('./extension.js')).extension,
  watch: async () => (await import('./inbox.js')).watch,
  list: async () => (await import('./inbox.js')).list,
  show: async () => (await import('./inbox.js')).show,
  ack: async () => (await import('./inbox.js')).ack,
  reply: async () => (await import('./inbox.js')).reply,
  resolve: async () => (await import('./inbox.js')).resolve,
  dismiss: async () => (await import('./inbox.js')).dismiss,
  hook: async () => (await import('./hook.js')).hook,
  repro: async () => (await import('./repro.js')).repro,
}

/** The command named `name`, loaded; undefined for no such command. */
export function loadCommand(name: string): Promise<Command> | undefined {
  return Object.hasOwn(COMMANDS, name) ? COMMANDS[name]!() : undefined
}

/** Every command, loaded (for `marginalia --help` and the reference). */
export async function loadCommands(): Promise<Record<string, Command>> {
  const entries = await Promise.all(Object.entries(COMMANDS).map(async ([name, load]) => [name, await load()] as const))
  return Object.fromEntries(entries)
}
