/**
 * Where Keystone tokens come from for the services Leasehold calls with its own credentials (Ironic, Neutron):
 * keystone/keystone-session.ts, renewed before they expire.
 */
export interface TokenSource {
  token(): Promise<string>;
  /** The token was refused (401): the next `token()` signs in again. */
  invalidate(token: string): void;
}
