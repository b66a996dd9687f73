// Loader hooks of record-modules.mjs: records each resolved URL, one per line, and changes nothing.
import { appendFileSync } from 'node:fs'

let file

export function initialize(data) {
  file = data.file
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context)
  appendFileSync(file, `${resolved.url}\n`)
  return resolved
}
