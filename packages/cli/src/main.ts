#!/usr/bin/env node
import { run } from './program.js'

process.exitCode = await run(process.argv)
// Nothing may keep the process alive after the command (a stray socket, a progress timer).
setTimeout(() => process.exit(), 200).unref()
