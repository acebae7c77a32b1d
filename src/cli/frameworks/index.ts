/**
 * The frameworks `init` sets up and `doctor` checks, most specific first: a meta-framework
 * (Next.js, Nuxt, SvelteKit, …) before plain Vite, and the script tag last (it matches anything).
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { next } from './next.js'
import { angular } from './angular.js'
import { astro } from './astro.js'
import { nuxt } from './nuxt.js'
import { preact } from './preact.js'
import { reactRouter } from './react-router.js'
import { scriptTag } from './script-tag.js'
import { django, laravel, rails } from './server-rendered.js'
import { solid } from './solid.js'
import { sveltekit } from './sveltekit.js'
import type { Framework, Project } from './types.js'
import { vite } from './vite.js'

export const FRAMEWORKS: readonly Framework[] = [next, nuxt, sveltekit, astro, reactRouter, solid, preact, angular, rails, django, laravel, vite, scriptTag]

/** The project at `root`, as the frameworks read it. */
export function readProject(root: string): Project {
  const pkg = readJson(path.join(root, 'package.json')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> } | undefined
  const find = (...names: string[]): string | undefined => names.map((n) => path.join(root, n)).find((f) => existsSync(f))
  const packageManager = find('pnpm-lock.yaml') ? 'pnpm' : find('yarn.lock') ? 'yarn' : find('bun.lockb', 'bun.lock') ? 'bun' : 'npm'
  return {
    root,
    deps: { ...pkg?.dependencies, ...pkg?.devDependencies },
    packageManager,
    find,
    read: (file) => {
      try {
        return readFileSync(path.resolve(root, file), 'utf8')
      } catch {
        return undefined
      }
    },
  }
}

/** The framework `project` is built with (the script tag when none is recognised). */
export function detectFramework(project: Project): Framework {
  return FRAMEWORKS.find((f) => f.detect(project)) ?? scriptTag
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
}
