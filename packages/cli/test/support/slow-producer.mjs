// A producer for pipeline tests: writes `user:0` … `user:<n-1>`, one per line, then says
// "ready <pid>" on standard error and waits, as a slow database export would, until killed.
// With a third argument "exit", it exits with code 3 instead (a producer that failed).
const n = Number(process.argv[2])
let out = ''
for (let i = 0; i < n; i++) out += `user:${i}\n`
process.stdout.write(out, () => {
  process.stderr.write(`ready ${process.pid}\n`)
  if (process.argv[3] === 'exit') process.exit(3)
})
setInterval(() => {}, 1000)
