import type { KeystoneConfig } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError, isLeaseholdError } from '../domain/errors.js';
import type { Metrics } from '../domain/metrics.js';
import { describe, KeystoneClient, KeystoneRefusedError } from '../keystone/keystone-client.js';
import { KeystoneSession } from '../keystone/keystone-session.js';
import type { Logger } from '../logger.js';

/**
 * Leasehold's Keystone session, signed in at start: a Keystone that does not answer, or that refuses Leasehold's
 * service credentials, stops the start with a message saying which (never the secret).
 */
export async function openKeystone(config: KeystoneConfig, clock: Clock, logger: Logger, metrics?: Metrics): Promise<KeystoneSession> {
  const session = new KeystoneSession(new KeystoneClient({ url: config.url, metrics }), config.credentials, clock);
  try {
    const info = await session.info();
    logger.info(
      { keystone: session.client.url, user: info.user.name, project: info.project?.name ?? null, roles: info.roles },
      'signed in to Keystone',
    );
    return session;
  } catch (err) {
    const who = describe(config.credentials);
    if (err instanceof KeystoneRefusedError) {
      throw new InvalidRequestError(`Keystone at ${session.client.url} refused Leasehold's service credentials (${who}): check KEYSTONE_USERNAME/KEYSTONE_PASSWORD or the application credential`);
    }
    if (isLeaseholdError(err)) throw new InvalidRequestError(`cannot start: ${err.message} (KEYSTONE_URL)`);
    throw err;
  }
}
