/**
 * How a person connects an agent, said the same way by every banner (`serve`, the Vite plugin,
 * `init`): `init` writes the agent's MCP config, which runs `marginalia mcp` over stdio on this
 * project's store and root. The HTTP endpoint (`/mcp`) stays for agents on another machine (a
 * team server), where a process of their own cannot reach the store.
 */
export const CONNECT_AGENT = 'Connect an agent: npx --no-install marginalia init (writes its MCP config: `marginalia mcp` over stdio, on this project\'s store and root), then restart the agent'

/** The line for agents on another machine: Streamable HTTP to `mcpUrl`. */
export function remoteAgentLine(mcpUrl: string, token: boolean): string {
  return `Agents on another machine: claude mcp add --transport http marginalia ${mcpUrl}${token ? ' --header "Authorization: Bearer <token>"' : ''}`
}
