/**
 * What the web UI's sign-in under Keystone needs of Keystone (keystone/keystone-client.ts provides it): a token for
 * a person's credentials or for another project of theirs, and the projects they may switch to. Leasehold passes
 * the credentials on and keeps nothing of them.
 */
export interface KeystoneSignIn {
  readonly url: string;
  /** `POST /v3/auth/tokens` with a client's `auth` body; KeystoneRefusedError (401) when refused. */
  issueWith(body: unknown, who: string): Promise<{ readonly token: string; readonly info: { readonly expiresAt: Date } }>;
  /** `DELETE /v3/auth/tokens`: the person's own token revoked (signing out). */
  revokeToken(userToken: string): Promise<void>;
  /** `GET /v3/auth/projects` with the person's token. */
  userProjects(userToken: string): Promise<readonly { readonly id: string; readonly name: string; readonly domainId: string | null }[]>;
}
