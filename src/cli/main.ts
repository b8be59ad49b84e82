import { run } from './run.js';

/**
 * The `leasehold` executable's entry (bin/leasehold.js imports it). The only place that touches process
 * globals; everything else is `run`, which tests call in-process.
 */
// `leasehold node list | head` closes the pipe early: that is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}

const code = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  // Read only by `leasehold console`: other commands never create the stdin stream.
  get stdin() {
    return process.stdin;
  },
});
// `serve` ends with its server closed; client commands may leave idle keep-alive sockets: exit explicitly.
process.exit(code);
