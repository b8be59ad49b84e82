import type { Node } from '../api-types.js';
import type { ApiClient } from '../client.js';
import type { CliContext } from '../context.js';
import { ApiError, CommandFailedError } from '../errors.js';
import { formatShortDuration } from '../format.js';

/** `node power --wait` polls this often: Ironic's fake and IPMI drivers take 0.2 s to a few seconds. */
const POLL_MS = 1_000;
export const DEFAULT_POWER_WAIT_MS = 2 * 60_000;

/** The power state each action ends in (a reboot ends powered on). */
const FINAL: Readonly<Record<string, string>> = { on: 'power on', off: 'power off', reboot: 'power on' };

/**
 * Waits until the node shows the power state `action` leads to (the server re-reads a node after an action until
 * Ironic settles, so the API shows the new state within moments), printing each
 * change seen on stderr; the node as last read. Gives up after `timeoutMs` (exit 1, saying where it stands), or at
 * once when Ironic records an error.
 */
export async function waitForPower(ctx: CliContext, client: ApiClient, path: string, action: string, timeoutMs: number): Promise<Node> {
  const want = FINAL[action]!;
  const deadline = ctx.now().getTime() + timeoutMs;
  let seen = '';
  for (;;) {
    const node = await client.get<Node>(path);
    const now = node.power_state ?? 'unknown';
    if (now !== seen) ctx.note(`${node.name ?? node.id}: ${now}`);
    seen = now;
    if (node.power_state === want) return node;
    if (node.power_state === null && node.last_error) {
      throw new CommandFailedError(`power ${action} of ${node.name ?? node.id} failed: ${node.last_error}`);
    }
    if (ctx.now().getTime() >= deadline) {
      throw new CommandFailedError(`gave up waiting after ${formatShortDuration(timeoutMs)}: ${node.name ?? node.id} is ${now} (see \`leasehold node show\`)`);
    }
    await ctx.sleep(Math.min(POLL_MS, Math.max(0, deadline - ctx.now().getTime())));
  }
}

/** A node's boot device in words for `node show`, or null when the caller may not read it or Ironic cannot say. */
export async function bootDeviceText(client: ApiClient, path: string): Promise<string | null> {
  try {
    const b = await client.get<{ boot_device: string | null; persistent: boolean }>(`${path}/boot-device`);
    return b.boot_device === null ? null : `${b.boot_device} (${b.persistent ? 'persistent' : 'next boot only'})`;
  } catch (err) {
    if (err instanceof ApiError && [403, 404, 409, 503].includes(err.status)) return null;
    throw err;
  }
}
