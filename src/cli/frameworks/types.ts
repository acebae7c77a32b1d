/**
 * What `init` and `doctor` know about one framework: how to recognise a project built with it,
 * whether its version is supported, its dev server (port and command), and the changes that set
 * Marginalia up in it. One module per framework in this folder; `index.ts` lists them.
 */

/** The project `init`/`doctor` runs in, read once. */
export interface Project {
  root: string
  /** dependencies and devDependencies of package.json (empty when there is none). */
  deps: Readonly<Record<string, string>>
  packageManager: 'npm' | 'pnpm' | 'yarn' | 'bun'
  /** The first of `names` (relative to root) that exists, as an absolute path. */
  find(...names: string[]): string | undefined
  /** A file's text relative to root, or undefined when it does not exist. */
  read(file: string): string | undefined
}

/** Where a framework's set-up writes: every change is shown before it is written. */
interface Plan {
  /** Replace `file` (absolute) with `after`; `what` says why, in a few words. */
  change(file: string, after: string, what: string): void
  /** Something the person must do or know (printed as `note:`). */
  note(text: string): void
}

export interface Framework {
  /** Short id printed by init and doctor (`next`, `nuxt`, `vite`, …). */
  id: string
  /** The name people know it by (`Next.js`). */
  name: string
  /** Whether the project is built with it; frameworks are tried in the order of FRAMEWORKS. */
  detect(project: Project): boolean
  /** Undefined when the installed version is supported; else why not and what works instead. */
  unsupported?(project: Project): string | undefined
  /** The dev server's default origin, e.g. http://localhost:3000 (doctor checks the overlay from it). */
  devOrigin: string
  /** The package.json script that starts the dev server. */
  devScript: string
  /** The command that starts the dev server when it is not a package.json script (`bin/rails server`). */
  devCommand?: string
  /** Adds the app-side changes (dev only) to the plan. */
  setUp(project: Project, plan: Plan): void
  /**
   * Whether the dev server starts the Marginalia server itself (the Vite plugin does); when false
   * the person runs `marginalia serve` beside it.
   */
  startsServer: boolean
}
