import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, inject, test } from 'vitest'

const readme = fileURLToPath(new URL('../README.md', import.meta.url))
const dir = fileURLToPath(new URL('./.readme-snippets/', import.meta.url))

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/**
 * Turns a README block into a module: the documented addresses become the throwaway servers',
 * and every line ending in `// → value` asserts that its expression equals the value.
 */
function toModule(code: string): string {
  const { host, port } = inject('redisStandalone')
  const node = inject('redisCluster')[0]
  const body = code
    .replace(/\{ host: 'localhost', port: 6379/g, `{ host: '${host}', port: ${port}`)
    .replace(/\[\{ host: 'localhost', port: 7000 \}\]/g, JSON.stringify([node]))
    .split('\n')
    .map((line) => {
      const match = /^(\s*);?(.*?)\s*\/\/ → (.+)$/.exec(line)
      return match ? `${match[1]}__expect(await (${match[2]}), ${match[3]}, ${JSON.stringify(match[2])})` : line
    })
    .join('\n')
  return `import { expect as __vitestExpect } from 'vitest'
const __expect = (actual: unknown, expected: unknown, what: string) => __vitestExpect(actual, what).toEqual(expected)
${body}
export {}
`
}

const blocksOf = async (path: string) => [...(await readFile(path, 'utf8')).matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
const blocks = await blocksOf(readme)
// The root README's Redis quick start runs here too, against the same throwaway server.
const rootBlocks = (await blocksOf(fileURLToPath(new URL('../../../README.md', import.meta.url)))).filter((b) => b.includes('@bloomkit/redis-backend'))

test('the README has examples, each with checked results', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(5)
  for (const block of blocks) expect(block).toMatch(/\/\/ → /)
})

test.each(blocks.map((block, i) => [i + 1, block] as const))('README example %i runs and its results hold', async (i, block) => {
  await mkdir(dir, { recursive: true })
  const file = `${dir}example-${i}.ts`
  await writeFile(file, toModule(block))
  await import(/* @vite-ignore */ file)
})

test('the root README has a Redis quick start with checked results', () => {
  expect(rootBlocks.length).toBe(1)
  expect(rootBlocks[0]).toMatch(/\/\/ → /)
})

test.each(rootBlocks.map((block, i) => [i + 1, block] as const))('root README Redis example %i runs and its results hold', async (i, block) => {
  await mkdir(dir, { recursive: true })
  const file = `${dir}root-example-${i}.ts`
  await writeFile(file, toModule(block))
  await import(/* @vite-ignore */ file)
})
