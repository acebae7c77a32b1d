/** Every `marginalia` command by name, in the order `marginalia --help` lists them (the reference is generated from it too). */
import { archive } from './archive.js'
import type { Command } from './command.js'
import { doctor } from './doctor.js'
import { extension } from './extension.js'
import { init } from './init.js'
import { mcp } from './mcp.js'
import { migrate } from './migrate.js'
import { reset } from './reset.js'
import { serve } from './serve.js'
import { agents, people, revoke } from './team.js'
import { exportCommand, importCommand } from './transfer.js'

export const COMMANDS: Readonly<Record<string, Command>> = { init, doctor, mcp, serve, archive, migrate, reset, export: exportCommand, import: importCommand, people, agents, revoke, extension }
