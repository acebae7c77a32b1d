// The MCP SDK's Node shims (`@modelcontextprotocol/server/_shims`) as the `marginalia` command's
// bundle links them (scripts/bundle.mjs): the same `process`, and a JSON Schema validator that
// loads Ajv on its first use instead of with the server. The SDK builds one validator per server
// but only uses it to check what a client sends back to a server's form elicitation, which the
// built-in tools never ask for; parsing Ajv (~290 KB) at every start-up would delay tools/list.
import { createRequire } from 'node:module'
import process from 'node:process'

const require = createRequire(import.meta.url)

export class DefaultJsonSchemaValidator {
  #ajv
  #validator

  constructor(ajv) {
    this.#ajv = ajv
  }

  getValidator(schema) {
    if (!this.#validator) {
      const { AjvJsonSchemaValidator } = require('@modelcontextprotocol/server/validators/ajv')
      this.#validator = new AjvJsonSchemaValidator(this.#ajv)
    }
    return this.#validator.getValidator(schema)
  }
}

export { process }
