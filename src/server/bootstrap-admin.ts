import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../domain/clock.js';
import { fromValue, issueToken } from '../domain/tokens.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';

export const ADMIN_USER = 'admin';

/**
 * On the first start with an empty store, creates the operator `admin` and its token: the value of
 * LEASEHOLD_ADMIN_TOKEN if set, else a random one written to `<dataDir>/admin-token` (mode 0600) and shown once on
 * the terminal. Only on a terminal: when stdout is a pipe or a file it is a log (journald, a container's log, CI
 * output) that others read and keep, so it only says where the file is. Later starts do nothing, whatever the
 * environment says.
 */
export async function bootstrapAdmin(options: {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly dataDir: string;
  readonly adminToken: string | null;
  readonly print: (line: string) => void;
  /** Whether `print` reaches a person at a terminal (default: stdout is a TTY). */
  readonly terminal?: boolean;
}): Promise<void> {
  const token = options.adminToken ? fromValue(options.adminToken) : issueToken();
  const created = await options.store.bootstrapAdmin(
    {
      userName: ADMIN_USER,
      token: { token_hash: token.hash, prefix: token.prefix, description: 'bootstrap admin token' },
    },
    options.clock.now(),
  );
  if (!created) return;
  if (options.adminToken) {
    options.logger.info({ user: ADMIN_USER }, 'created the admin user with the token from LEASEHOLD_ADMIN_TOKEN');
    return;
  }
  const file = join(options.dataDir, 'admin-token');
  await writeFile(file, `${token.value}\n`, { mode: 0o600 });
  options.logger.info({ user: ADMIN_USER, file }, 'created the admin user and its token');
  if (options.terminal ?? process.stdout.isTTY === true) {
    options.print(`Admin token (shown once, also saved to ${file}):\n  ${token.value}`);
  } else {
    options.print(`Admin token saved to ${file} (mode 0600; shown only when stdout is a terminal)`);
  }
}
