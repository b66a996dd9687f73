// A child process for the crash, lock and disk-full tests. Usage:
//   node child.mjs <entry (built index.js)> <command> <folder> [json options]
// Commands print one line per event on stdout, so the parent learns what resolved before it acts.
const [entry, command, folder, json] = process.argv.slice(2)
const { LevelBloomFilter } = await import(entry)
const options = json ? JSON.parse(json) : {}

function report(error) {
  console.log(`error ${JSON.stringify({ code: error.code, message: error.message, cause: error.cause?.message ?? error.cause?.code })}`)
}

if (command === 'load') {
  // Adds batches `b<i>:<j>` forever; "added <i>" is printed only after addMany(batch i) resolved.
  // batchKeys is this harness's own; the rest are the filter's options (it refuses names it does not take).
  const { batchKeys = 2000, ...filterOptions } = options
  const filter = await LevelBloomFilter.create(folder, { capacity: 2_000_000, errorRate: 0.01, ...filterOptions })
  console.log('ready')
  for (let i = 0; ; i++) {
    const keys = Array.from({ length: batchKeys }, (_, j) => `b${i}:${j}`)
    try {
      await filter.addMany(keys)
    } catch (error) {
      report(error)
      break
    }
    console.log(`added ${i}`)
  }
  await filter.close().catch(report)
  console.log('closed')
} else if (command === 'open') {
  try {
    const filter = await LevelBloomFilter.open(folder)
    console.log('opened')
    await filter.close()
  } catch (error) {
    report(error)
  }
} else if (command === 'race') {
  // One create() race per "go <folder>" line on stdin, against the other children given the same
  // line; prints "result <i> ok <seed>" or "result <i> <error>". The parent sends the next line when every
  // child has answered, so the races start together.
  const { createInterface } = await import('node:readline')
  let i = 0
  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.startsWith('go ')) continue
    try {
      // No seed: each racer would pick its own random one; the folder's must win.
      const filter = await LevelBloomFilter.create(line.slice(3), { capacity: 1000, errorRate: 0.01 })
      const { seed } = filter.parameters
      await filter.close()
      console.log(`result ${i} ok ${seed}`)
    } catch (error) {
      console.log(`result ${i} ${JSON.stringify({ code: error.code, message: error.message })}`)
    }
    i++
  }
} else if (command === 'memory') {
  // A filter far larger than its cache: fill it, check it, report the RSS.
  const rssBefore = process.memoryUsage().rss
  const filter = await LevelBloomFilter.create(folder, { capacity: options.capacity, errorRate: 0.01, cacheBytes: options.cacheBytes })
  const keys = Array.from({ length: options.keys }, (_, i) => `m:${i}`)
  let peak = 0
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20)
  await filter.addMany(keys)
  const found = await filter.hasMany(keys)
  const count = await filter.estimateCount()
  await filter.close()
  const again = await LevelBloomFilter.open(folder, { cacheBytes: options.cacheBytes })
  const foundAgain = await again.hasMany(keys)
  await again.close()
  clearInterval(sample)
  peak = Math.max(peak, process.memoryUsage().rss)
  console.log(`result ${JSON.stringify({
    bits: filter.parameters.bits,
    missing: found.filter((x) => !x).length + foundAgain.filter((x) => !x).length,
    count,
    rssBefore,
    peak,
  })}`)
}

if (command === 'import-file') {
  // Imports the snapshot in the file `options.snapshot` into `folder` (either kind); "importing"
  // first, "imported" once it resolved. The layered import test kills it part way.
  const { readFileSync } = await import('node:fs')
  console.log('importing')
  try {
    const filter = await LevelBloomFilter.import(folder, readFileSync(options.snapshot))
    console.log('imported')
    await filter.close()
  } catch (error) {
    report(error)
  }
}

if (command === 'damage') {
  // For each case of options.cases ({ file, how: 'flip' | 'cut' | 'delete', at: 0 … 1 }): copies
  // options.source to `<folder>-<i>`, damages that file, opens it (options.kind), asks for the
  // keys `<options.prefix>:0 …` (options.keys of them) and reads every page; prints
  // "case <i> <json>" (`{ missing }` or the error's code and message), then "done". Run in a child
  // so that a native abort on a damaged folder is seen as the child's exit, not the test runner's.
  const { cpSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } = await import('node:fs')
  const { join } = await import('node:path')
  const keys = Array.from({ length: options.keys }, (_, i) => `${options.prefix}:${i}`)
  for (const [i, { file, how, at }] of options.cases.entries()) {
    const target = `${folder}-${i}`
    cpSync(options.source, target, { recursive: true })
    const path = join(target, file)
    const size = statSync(path).size
    if (how === 'delete') rmSync(path)
    else if (how === 'cut') truncateSync(path, Math.floor(size * at))
    else {
      const bytes = readFileSync(path)
      const where = Math.min(Math.floor(size * at), bytes.length - 2)
      bytes[where] ^= 0xff
      bytes[where + 1] ^= 0xff
      writeFileSync(path, bytes)
    }
    let result
    try {
      const filter = await LevelBloomFilter.open(target, { kind: options.kind })
      try {
        const found = await filter.hasMany(keys)
        for await (const chunk of filter.exportChunks()) if (chunk.length === 0) throw new Error('empty chunk')
        await filter.estimateCount()
        result = { missing: found.filter((x) => !x).length }
      } finally {
        await filter.close().catch(() => {})
      }
    } catch (error) {
      result = { code: error?.code, message: String(error?.message ?? error) }
    }
    console.log(`case ${i} ${JSON.stringify(result)}`)
    rmSync(target, { recursive: true, force: true })
  }
  console.log('done')
}
