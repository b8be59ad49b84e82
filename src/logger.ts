import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs on stdout. Secrets are redacted by path as a second line of defence: the code never
 * passes tokens or BMC credentials to the logger in the first place.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'leasehold' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'token',
          '*.token',
          'authorization',
          '*.authorization',
          'headers.authorization',
          'headers["x-auth-token"]',
          'driver_info',
          '*.driver_info',
          'password',
          '*.password',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
