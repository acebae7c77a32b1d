import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'scratch/**', '.marginalia/**', 'bench/results/**', 'bench/.cache/**', 'test/fixtures/apps/**', 'test/fixtures/frameworks/**', 'test/helpers/.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Type-aware rules: a promise nobody awaits or handles is a bug until it says otherwise.
    // Deliberate fire-and-forget is written `void promise` (its rejection handled inside), and a
    // deliberately ignored rejection is `.catch(ignore)` with the reason beside it.
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.json', './tsconfig.overlay.json', './tsconfig.browser-tests.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // The overlay and the inbox run in the browser, as bundles every annotated page downloads.
    files: ['src/browser/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      // Types may come from anywhere (esbuild erases them); values only from the browser code and the
      // store's zod-free modules. One value import of the model pulls zod in: overlay.js 60 KB → 520 KB.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/store/*', '!**/store/vocabulary.js', '!**/store/apply.js', '!**/store/questions.js', '!**/store/steps.js'],
              allowTypeImports: true,
              message: 'The browser bundles import only the zod-free store modules (vocabulary.js, apply.js, questions.js, steps.js); use `import type` for the rest.',
            },
            {
              group: ['zod', 'zod/*', 'immer', 'rxjs', 'rxjs/*', 'lowdb', 'lowdb/*', 'proper-lockfile', '@modelcontextprotocol/*', 'node:*'],
              allowTypeImports: true,
              message: 'Server-side packages must not reach the browser bundles (use `import type`).',
            },
            {
              // src/views by its relative paths: the overlay has a views/ room of its own.
              group: ['**/tools/*', '**/http/*', '**/mcp/*', '../../views/*', '../../../views/*', '../../../../views/*', '**/cli/*', '../../*.js', '../../../*.js'],
              allowTypeImports: true,
              message: 'The browser code does not import the server side (use `import type`).',
            },
          ],
        },
      ],
    },
  },
  {
    // The inbox as an MCP App talks to its host through the MCP Apps SDK (`App`): the one server-side
    // package it may bundle. The rest of the browser rules hold.
    files: ['src/browser/app/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/store/*', '!**/store/vocabulary.js', '!**/store/apply.js', '!**/store/questions.js', '!**/store/steps.js'],
              allowTypeImports: true,
              message: 'The browser bundles import only the zod-free store modules (vocabulary.js, apply.js, questions.js, steps.js); use `import type` for the rest.',
            },
            {
              group: ['zod', 'zod/*', 'immer', 'rxjs', 'rxjs/*', 'lowdb', 'lowdb/*', 'proper-lockfile', '@modelcontextprotocol/*', '!@modelcontextprotocol/ext-apps', 'node:*'],
              allowTypeImports: true,
              message: 'Server-side packages must not reach the browser bundles (use `import type`); the app imports only @modelcontextprotocol/ext-apps.',
            },
            {
              // src/views by its relative paths: the overlay has a views/ room of its own.
              group: ['**/tools/*', '**/http/*', '**/mcp/*', '../../views/*', '../../../views/*', '../../../../views/*', '**/cli/*', '../../*.js', '../../../*.js'],
              allowTypeImports: true,
              message: 'The browser code does not import the server side (use `import type`).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // stdout of the stdio server is the protocol: log to stderr only.
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
)
