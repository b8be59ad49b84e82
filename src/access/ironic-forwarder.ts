import type { AccessGuard } from '../drivers/hardware-driver.js';

/**
 * What the gateway needs of Ironic: a request sent with Leasehold's credentials, answered as Ironic answered. A
 * tenant's request about a node carries a guard, asked before every attempt (retries on Ironic's 409 "locked"
 * included), so nothing a lessee sends reaches Ironic after its lease ended.
 */
export interface IronicForwarder {
  readonly url: string;
  forward(
    method: string,
    pathAndQuery: string,
    options?: { readonly body?: string; readonly microversion?: string | null; readonly guard?: AccessGuard },
  ): Promise<{ readonly status: number; readonly text: string; readonly headers: Headers }>;
}
