/**
 * What the TypeScript declarations say: the properties of an exported interface (their types as
 * written and their doc comments), read with the compiler's type checker, so a reference page
 * follows the code wherever a declaration moves behind its export.
 */
import path from 'node:path'
import ts from 'typescript'

/** A doc comment as reference text: one line, without the issue numbers that are history, not meaning. */
function docText(parts: ts.SymbolDisplayPart[]): string {
  return ts.displayPartsToString(parts).replace(/\s*\(issue \d+\)/g, '').replace(/\s+/g, ' ').trim()
}

export interface Property {
  name: string
  optional: boolean
  /** The type as written in the declaration (or as the checker prints it). */
  type: string
  /** The doc comment, on one line. */
  doc: string
}

export class Declarations {
  private readonly program: ts.Program
  private readonly checker: ts.TypeChecker

  constructor(
    private readonly root: string,
    entries: readonly string[],
  ) {
    const options: ts.CompilerOptions = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, skipLibCheck: true, noEmit: true, types: ['node'] }
    this.program = ts.createProgram(
      entries.map((e) => path.join(root, e)),
      options,
    )
    this.checker = this.program.getTypeChecker()
  }

  /** The type an exported name of `file` declares (following re-exports). */
  exported(file: string, name: string): ts.Type {
    return this.checker.getDeclaredTypeOfSymbol(this.symbol(file, name))
  }

  /** The type of an exported value (a constant) of `file`. */
  valueType(file: string, name: string): ts.Type {
    return this.checker.getTypeOfSymbol(this.symbol(file, name))
  }

  private symbol(file: string, name: string): ts.Symbol {
    const source = this.program.getSourceFile(path.join(this.root, file))
    const module = source && this.checker.getSymbolAtLocation(source)
    if (!module) throw new Error(`docs: ${file} is not part of the program`)
    let symbol = this.checker.getExportsOfModule(module).find((s) => s.name === name)
    if (!symbol) throw new Error(`docs: ${file} does not export ${name}`)
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol)
    return symbol
  }

  /** The members of a union type (a type that is not a union is its own only member). */
  members(type: ts.Type): ts.Type[] {
    return type.isUnion() ? type.types : [type]
  }

  /** Every property of a type, inherited ones included, in declaration order. */
  properties(type: ts.Type): Property[] {
    return this.checker.getPropertiesOfType(type).map((p) => {
      const declaration = p.valueDeclaration ?? p.declarations?.[0]
      const written = declaration && (ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration)) ? declaration.type?.getText() : undefined
      // A type computed in place (`(typeof LIST)[number]`) reads better as what it comes to.
      const type = written !== undefined && !written.includes('typeof') ? written : declaration ? this.checker.typeToString(this.checker.getTypeOfSymbolAtLocation(p, declaration)) : 'unknown'
      return {
        name: p.name,
        optional: (p.flags & ts.SymbolFlags.Optional) !== 0,
        type: type.replace(/\s+/g, ' '),
        doc: docText(p.getDocumentationComment(this.checker)),
      }
    })
  }

  /** The doc comment of an exported declaration. */
  doc(file: string, name: string): string {
    const type = this.exported(file, name)
    const symbol = type.aliasSymbol ?? type.getSymbol()
    return symbol ? docText(symbol.getDocumentationComment(this.checker)) : ''
  }
}
