import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';

const SHUTDOWN_GRACE_MS = 10_000;

/** `leasehold serve`: runs until SIGTERM or SIGINT, then shuts down gracefully. */
export async function serveCommand(flags: { port?: number; host?: string; role?: string }): Promise<void> {
  const config = loadConfig(process.env, flags);
  const logger = createLogger(config.logLevel);
  // The embedded store first, then the server's modules: opening PGlite is mostly work off the main thread (the
  // image's files written by libuv's threads, its WebAssembly compiled by V8's), which the 0.4–0.6 s of loading
  // Hono, the routes and the rest now overlaps instead of preceding.
  const store = config.databaseUrl
    ? undefined
    : import('../store/open-store.js').then(({ openStore }) => openStore({ dataDir: config.dataDir, logger }));
  store?.catch(() => undefined); // awaited by startServer; a start that fails before that closes it there
  const { startServer } = await import('./start-server.js');
  const server = await startServer(config, { logger, store });

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      // A stuck connection must not keep a replica alive forever during a rolling restart.
      setTimeout(() => {
        logger.error('graceful shutdown took too long; exiting');
        process.exit(1);
      }, SHUTDOWN_GRACE_MS).unref();
      server.close().then(resolve, (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  logger.flush();
}
