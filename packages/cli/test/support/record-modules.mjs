// Preloaded with `node --import` by test/lazy-backends.test.ts: appends to the file named by
// BLOOMKIT_RECORD_MODULES every module URL the process resolves (ESM imports, through a resolve
// hook on the loader's thread) and, at exit, every CommonJS file it required.
import { appendFileSync } from 'node:fs'
import { createRequire, register } from 'node:module'
import { pathToFileURL } from 'node:url'

const file = process.env.BLOOMKIT_RECORD_MODULES
if (file === undefined || file === '') throw new Error('record-modules.mjs needs BLOOMKIT_RECORD_MODULES, the file to record into')
register('./record-modules-hooks.mjs', import.meta.url, { data: { file } })
const { cache } = createRequire(import.meta.url)
process.on('exit', () => {
  const required = Object.keys(cache).map((path) => `${pathToFileURL(path).href}\n`)
  appendFileSync(file, required.join(''))
})
