import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

/**
 * The modules of a package's `src/` (tests excluded) and, for each, the modules of that package it
 * imports: `import`, `import type`, `export … from` and `import()` alike, since a type-only circle is
 * still two modules that cannot be read one without the other.
 */
export function sourceGraph(sourceRoot: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(sourceRoot)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    const imports = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
    graph.set(relative(sourceRoot, file), imports.map((target) => relative(sourceRoot, target)))
  }
  return graph
}

/** Every `.ts` file under `directory`, tests (`*.test.ts`, `*.test-d.ts`) left out. */
export function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !/\.test(-d)?\.ts$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort()
}

/**
 * The import circles of `graph`: each strongly connected set of two or more modules (or a module
 * that imports itself), as one circle through it, so a failure names the files to untangle.
 */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>()
  const lowest = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const circles: string[][] = []
  const visit = (module: string): void => {
    index.set(module, index.size)
    lowest.set(module, index.get(module)!)
    stack.push(module)
    onStack.add(module)
    for (const target of graph.get(module) ?? []) {
      if (!graph.has(target)) continue
      if (!index.has(target)) {
        visit(target)
        lowest.set(module, Math.min(lowest.get(module)!, lowest.get(target)!))
      } else if (onStack.has(target)) lowest.set(module, Math.min(lowest.get(module)!, index.get(target)!))
    }
    if (lowest.get(module) !== index.get(module)) return
    const members: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      members.push(member)
    } while (member !== module)
    if (members.length > 1 || graph.get(module)!.includes(module)) circles.push(circleThrough(graph, new Set(members), module))
  }
  for (const module of graph.keys()) if (!index.has(module)) visit(module)
  return circles
}

/** A shortest path from `start` back to itself inside `members` (breadth first). */
function circleThrough(graph: ReadonlyMap<string, readonly string[]>, members: ReadonlySet<string>, start: string): string[] {
  const previous = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const module = queue.shift()!
    for (const target of graph.get(module) ?? []) {
      if (!members.has(target)) continue
      if (target === start) {
        const path = [module]
        while (path[0] !== start) path.unshift(previous.get(path[0])!)
        return [...path, start]
      }
      if (previous.has(target)) continue
      previous.set(target, module)
      queue.push(target)
    }
  }
  return [start, start]
}
