// fast-check itself, not @fast-check/vitest: both share the one fast-check module, whose global
// configuration is what counts, and importing @fast-check/vitest costs seconds of CPU per test file
// (it walks every chain of vitest's test modifiers), which most files never use.
import { configureGlobal, readConfigureGlobal } from 'fast-check'

// Runs before each test file (vitest `setupFiles`, from vitest.shared.ts' propertySeeds): every
// fast-check property defined after it (test.prop and fc.assert alike) takes this seed. Empty means
// `npm run test:explore`: each property draws its own, shown in its test name.
// Node workers see it in process.env; a browser project only in import.meta.env.
const fromEnv = (env: Record<string, string | undefined> | undefined) => env?.BLOOMKIT_FC_SEED
/** BLOOMKIT_FC_SEED as this worker sees it: '' under `npm run test:explore`, a number otherwise. */
export const seed =
  fromEnv((globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env) ??
  fromEnv((import.meta as ImportMeta & { env?: Record<string, string | undefined> }).env)
if (seed !== undefined && seed !== '') {
  const value = Number(seed)
  if (!Number.isInteger(value)) throw new Error(`BLOOMKIT_FC_SEED must be an integer; got ${JSON.stringify(seed)}`)
  configureGlobal({ ...readConfigureGlobal(), seed: value })
}
