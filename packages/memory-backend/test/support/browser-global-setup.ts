/**
 * Runs in Node before the browser tests: computes the Node fingerprint in this same test run and
 * hands it to the browser through `provide`, so the browser compares against real Node output.
 */
import type { TestProject } from 'vitest/node'
import { fingerprint, type Fingerprint } from './fingerprint.js'

declare module 'vitest' {
  export interface ProvidedContext {
    nodeFingerprint: Fingerprint
  }
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide('nodeFingerprint', await fingerprint())
}
