import type { Principal, Role } from './identity.js';

/**
 * Who vouches for the tokens callers present (LEASEHOLD_IDENTITY): Leasehold's own users and tokens (`local`, the
 * embedded default) or Keystone's (`keystone`). The REST API, the gateway and the console ask it alike.
 */
export interface IdentityBackend {
  readonly kind: 'local' | 'keystone';
  /**
   * The principal `token` stands for at this instant; null when it is unknown, expired or revoked (a 401).
   * BackendUnavailableError when the identity service cannot be asked (a 503, never a 401).
   */
  authenticate(token: string): Promise<Principal | null>;
  /** Readiness: rejects with the reason when the identity service cannot be reached. */
  ping(): Promise<void>;
  /** Drops what this process remembers of `token` (it was just revoked): its next use asks again. */
  forget?(token: string): void;
}

/** How Leasehold itself signs in to Keystone: a password user in a project, or an application credential. */
export type KeystoneCredentials =
  | {
      readonly type: 'password';
      readonly username: string;
      readonly password: string;
      readonly userDomainName: string;
      readonly projectName: string;
      readonly projectDomainName: string;
    }
  | { readonly type: 'application_credential'; readonly id: string; readonly secret: string };

/**
 * Which Keystone role names stand for which Leasehold role (the highest one a token carries wins). By default each
 * role as it is named; `admin` makes the operator only on a system-scoped token or one of the admin project, and is
 * the project's `manager` elsewhere. The policy file's `keystone_roles` overrides it.
 */
export type KeystoneRoleMap = Readonly<Record<Role, readonly string[]>>;

export const DEFAULT_KEYSTONE_ROLES: KeystoneRoleMap = {
  reader: ['reader'],
  member: ['member'],
  manager: ['manager'],
  admin: ['admin'],
};
