import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { startServer } from './start-server.js';

const SHUTDOWN_GRACE_MS = 10_000;

/** `leasehold serve`: runs until SIGTERM or SIGINT, then shuts down gracefully. */
export async function serveCommand(flags: { port?: number; host?: string; role?: string }): Promise<void> {
  const config = loadConfig(process.env, flags);
  const logger = createLogger(config.logLevel);
  const server = await startServer(config, { logger });

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
