import { Option, type Command } from 'commander';
import { parsePort } from '../parsers.js';

/** `leasehold serve`: the server itself. Loaded lazily so client commands never load server code. */
export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .summary('run the Leasehold server')
    .description('run the Leasehold server (API and worker) until SIGTERM or SIGINT')
    .addOption(new Option('--port <n>', 'TCP port to listen on; 0 picks a free port').argParser(parsePort))
    .option('--host <host>', 'address to listen on, e.g. 0.0.0.0 for all interfaces')
    .addOption(new Option('--role <role>', 'api: serve requests; worker: run the lease engine; all: both').choices(['api', 'worker', 'all']))
    .addHelpText('after', '\nOther settings come from the environment; see the README (Configuration).')
    .action(async (flags: { port?: number; host?: string; role?: string }) => {
      const { serveCommand } = await import('../../server/serve-command.js');
      await serveCommand({ port: flags.port, host: flags.host, role: flags.role });
    });
}
