/**
 * The Marginalia skill (`SKILL.md`, the Agent Skills format: frontmatter `name` in a-z, 0-9 and `-`,
 * at most 64 characters; `description` at most 1 024), which `init` installs for the agents picked:
 * how to work the person's annotations with the CLI or the MCP tools.
 */
export const SKILL_NAME = 'marginalia'

const SKILL_DESCRIPTION =
  'Work the annotations a person leaves on the running web app in the browser (Marginalia): list what is pending, acknowledge, make the change, reply, resolve or dismiss. Use when told about Marginalia annotations, when a hook or monitor reports one, or when asked to check or watch the annotations.'

export function skillMarkdown(): string {
  return `---
name: ${SKILL_NAME}
description: ${SKILL_DESCRIPTION}
---

# Working the Marginalia inbox

A person points at elements of the running app in the browser and writes what should change. Each
annotation has an id, a comment, the page URL, and usually the source location (\`file:line\`) and
component that render the element. Your job: make the change in the code and tell the person.

## The loop

1. See what is pending: \`npx marginalia list\` (or the \`get_all_pending\` tool). Oldest first.
2. Take one before you work on it: \`npx marginalia ack ID\` (\`acknowledge\`). The person sees it.
3. Read it whole when the summary is not enough: \`npx marginalia show ID\` (\`get_annotation\`:
   the element's HTML, the source lines around \`file:line\`, every reply, screenshots).
4. Open the source location first; change the code.
5. Close it: \`npx marginalia resolve ID "what you changed"\` (\`resolve\`). If it will not be done:
   \`npx marginalia dismiss ID "why"\`. To ask something: \`npx marginalia reply ID "question"\`
   (or the \`ask\` tool, which waits for the answer).
6. Next one. When none is left and you are asked to keep listening:
   \`npx marginalia watch --once\` blocks until the next annotation lands and prints it as a JSON
   line (\`prompt\` says what to do); or call \`watch_annotations\`.

## Rules

- Acknowledge before working, resolve after: the person watches the status change in the page.
- One annotation at a time, oldest first, unless they are the same change.
- Say what you changed in the summary in one or two sentences; the person reads it on the page.
- \`--json\` on any command gives JSON instead of text. \`--url URL --token T\` works against a
  team server instead of this project's store.
- Hooks and the Claude Code monitor may tell you about new annotations between turns: treat
  each as a new item of this loop; you are never told about the same one twice.
`
}
