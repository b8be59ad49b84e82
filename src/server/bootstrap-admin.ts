import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../domain/clock.js';
import { fromValue, issueToken } from '../domain/tokens.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';

export const ADMIN_USER = 'admin';

/**
 * On the first start with an empty store, creates the operator `admin` and its token: the value of
 * LEASEHOLD_ADMIN_TOKEN if set, else a random one that is printed once and written to
 * `<dataDir>/admin-token` (mode 0600). Later starts do nothing, whatever the environment says.
 */
export async function bootstrapAdmin(options: {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly dataDir: string;
  readonly adminToken: string | null;
  readonly print: (line: string) => void;
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
  options.print(`Admin token (shown once, also saved to ${file}):\n  ${token.value}`);
}
