/** `marginalia init` adds the Vite plugin the way the config is written: one plugin a line, or inline. */
import { describe, expect, it } from 'vitest'
import { addVitePlugin } from '../../../src/cli/frameworks/vite.js'

describe('init: the Vite plugin line', () => {
  it("puts marginalia() on a line of its own in a list written one plugin a line (create-vue's), with no trailing space", () => {
    const before = ["import { defineConfig } from 'vite'", "import vue from '@vitejs/plugin-vue'", '', 'export default defineConfig({', '  plugins: [', '    vue(),', '  ],', '})', ''].join('\n')
    expect(addVitePlugin(before, false)).toBe(
      ["import { defineConfig } from 'vite'", "import vue from '@vitejs/plugin-vue'", "import marginalia from 'marginalia/vite'", '', 'export default defineConfig({', '  plugins: [', '    marginalia(),', '    vue(),', '  ],', '})', ''].join('\n'),
    )
  })

  it('puts it first in an inline list, and alone in an empty one', () => {
    expect(addVitePlugin("import react from '@vitejs/plugin-react'\nexport default { plugins: [react()] }\n", false)).toBe(
      "import react from '@vitejs/plugin-react'\nimport marginalia from 'marginalia/vite'\nexport default { plugins: [marginalia(), react()] }\n",
    )
    expect(addVitePlugin('module.exports = { plugins: [] }\n', true)).toBe("const marginalia = require('marginalia/vite').default\nmodule.exports = { plugins: [marginalia()] }\n")
  })

  it('leaves a config that has it alone, and says when there is no plugins list', () => {
    const has = "import marginalia from 'marginalia/vite'\nexport default { plugins: [marginalia()] }\n"
    expect(addVitePlugin(has, false)).toBe(has)
    expect(addVitePlugin('export default {}\n', false)).toBeNull()
  })
})
