import type { Duplex } from 'node:stream';
import type { Clock } from '../domain/clock.js';
import { BackendUnavailableError, ForbiddenError, isLeaseholdError, NodeBusyError } from '../domain/errors.js';
import type { AccessGuard, HardwareDriver } from '../drivers/hardware-driver.js';

export interface OpenConsoleOptions {
  readonly clock: Clock;
  /** How long to wait for the console to come up (Ironic's socat console takes 10–16 s). */
  readonly timeoutMs: number;
  /** How often to ask the driver meanwhile. */
  readonly pollMs: number;
  /** Whether the caller may turn the console on (the policy's set_console_state). */
  readonly mayEnable: boolean;
  readonly signal: AbortSignal;
  /** Called once when the console had to be turned on, to tell the person waiting. */
  readonly onEnabling: () => void;
  /**
   * The caller's access, asked before every round (and by the driver before every attempt of the turn-on): the
   * wait can outlast the lease, and nothing may reach the node after it. Its refusal ends the wait.
   */
  readonly guard?: AccessGuard;
}

/**
 * After asking Ironic to enable it, ask again if it still shows disabled this long after (someone turned it off
 * meanwhile). Longer than Ironic's own 10–16 s, during which a second request only meets the node's lock.
 */
const REQUEST_AGAIN_MS = 20_000;

/**
 * Opens a byte stream to the node's console, turning it on first if needed, all within one bounded wait. Ironic
 * answers the enable request at once but its socat console only shows an address after 10–16 s; socat writes the
 * pid file Ironic waits for just before it listens, so the first connection can still be refused; a console whose
 * interface gives no address (Ironic's `fake`) never does. So a locked node (NodeBusyError) and an unreachable
 * console or Ironic (BackendUnavailableError) are tried again until the deadline, and then the last problem is
 * the answer (a BackendUnavailableError). Anything else — a console type Leasehold cannot bridge — is at once.
 * Every round is admitted by the caller's guard first, and a refusal (access ended) is the answer at once.
 */
export async function openConsole(driver: HardwareDriver, nodeId: string, options: OpenConsoleOptions): Promise<Duplex> {
  const { clock } = options;
  const deadline = clock.now().getTime() + options.timeoutMs;
  let requestedAt: number | null = null;
  let lastProblem = '';
  for (;;) {
    options.signal.throwIfAborted();
    try {
      // Inside the try: a store that cannot confirm access (database down) sends nothing and is tried again.
      await options.guard?.admit();
      const console = await driver.getConsole(nodeId);
      if (console.enabled && console.info !== null) return await driver.connectConsole(nodeId);
      const now = clock.now().getTime();
      if (console.enabled) {
        lastProblem = 'it is enabled but gives no address to connect to (yet); Leasehold connects to socat consoles (e.g. ipmitool-socat)';
      } else if (requestedAt === null || now - requestedAt >= REQUEST_AGAIN_MS) {
        if (!options.mayEnable) {
          throw new ForbiddenError(
            'the serial console is off and the policy (baremetal:node:set_console_state) does not allow you to turn it on',
          );
        }
        await driver.setConsoleEnabled(nodeId, true, { guard: options.guard });
        if (requestedAt === null) options.onEnabling();
        requestedAt = now;
        lastProblem = 'the console was asked to turn on and has not come up';
      }
    } catch (err) {
      // A locked node or a moment without Ironic: try again until the deadline. Anything else is the answer.
      if (!(err instanceof NodeBusyError || err instanceof BackendUnavailableError)) throw err;
      lastProblem = isLeaseholdError(err) ? err.message : String(err);
    }
    if (clock.now().getTime() >= deadline) {
      throw new BackendUnavailableError(
        `the serial console of node ${nodeId} did not come up within ${Math.round(options.timeoutMs / 1000)} s: ${lastProblem}`,
        { details: { node: nodeId } },
      );
    }
    await clock.sleep(Math.min(options.pollMs, Math.max(0, deadline - clock.now().getTime())), options.signal);
  }
}
