import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, test } from 'vitest'
import { sourceFiles } from '../../test-support/source-graph.js'

// Two of issue 34's rules for every package's src/, held here rather than by review:
// - no file over 400 lines: a module that grows past that is doing more than one job, and is split
//   by concern rather than read whole;
// - no positional boolean parameter: `unlock(shards, token, false)` says nothing at the call site;
//   a flag goes in an options object (`{ force }`), and a long parameter list in a call object.
//   Parameters of function types (callbacks) and assertion functions (`check(condition, …)`) are
//   not flags.

const root = fileURLToPath(new URL('../../', import.meta.url))
const packages = join(root, 'packages')
const MAX_LINES = 400

const files = readdirSync(packages).flatMap((name) => sourceFiles(join(packages, name, 'src')))

/** Whether `type` is `boolean`, or a union holding it. */
function isBooleanType(type: ts.TypeNode | undefined): boolean {
  if (type === undefined) return false
  if (type.kind === ts.SyntaxKind.BooleanKeyword) return true
  return ts.isUnionTypeNode(type) && type.types.some((member) => member.kind === ts.SyntaxKind.BooleanKeyword)
}

/** `file:line name` of each parameter in `source` that is a positional flag. */
function positionalBooleans(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isParameter(node) && ts.isIdentifier(node.name)) {
      const owner = node.parent
      const flag = isBooleanType(node.type) || node.initializer?.kind === ts.SyntaxKind.TrueKeyword || node.initializer?.kind === ts.SyntaxKind.FalseKeyword
      const callback = ts.isFunctionTypeNode(owner) || ts.isArrowFunction(owner) || ts.isFunctionExpression(owner)
      const assertion = 'type' in owner && owner.type !== undefined && ts.isTypePredicateNode(owner.type as ts.TypeNode)
      if (flag && !callback && !assertion) found.push(`${relative(root, path)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${node.name.text}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe('source rules over packages/*/src', () => {
  test('the files are found', () => {
    expect(files.length).toBeGreaterThan(100)
  })

  test(`no file is over ${MAX_LINES} lines`, () => {
    const over = files.map((path) => ({ file: relative(root, path), lines: readFileSync(path, 'utf8').split('\n').length - 1 })).filter(({ lines }) => lines > MAX_LINES)
    expect(over).toEqual([])
  })

  test('no function takes a positional boolean', () => {
    expect(files.flatMap((path) => positionalBooleans(path, readFileSync(path, 'utf8')))).toEqual([])
  })

  test('the rule finds a flag, typed or defaulted, and passes callbacks, assertions and options objects', () => {
    const text = [
      'export function unlock(token: string, dropNew: boolean): void {}',
      'export function open(name: string, create = false): void {}',
      'export function lock(token: string, { force }: { readonly force: boolean }): void {}',
      'export function check(condition: boolean, message: string): asserts condition {}',
      'export const each = (done: (ok: boolean) => void) => done(true)',
    ].join('\n')
    expect(positionalBooleans(join(root, 'x.ts'), text)).toEqual(['x.ts:1 dropNew', 'x.ts:2 create'])
  })
})
