// The token lives in sessionStorage: it survives a reload of the tab but not closing it, and other tabs (or
// other sites) never see it. A token is a credential; localStorage would keep it on disk indefinitely.
// Nothing else of a sign-in is kept: a password or an application credential's secret goes to the server once
// and stays in the sign-in form's state only until the form is left.
const KEY = 'leasehold.token';
// When the token expires, if the sign-in said (Keystone's expires_at; a pasted token's is not known). Not a
// secret: kept beside the token so that a reload still shows it and can say "expired" rather than "revoked".
const EXPIRES_KEY = 'leasehold.token-expires-at';

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    // Storage can be disabled (privacy settings): the UI then works for this page view only.
    return null;
  }
}

export function readToken(): string | null {
  const value = storage()?.getItem(KEY)?.trim();
  return value ? value : null;
}

/** The token's expiry (RFC 3339) when known. */
export function readTokenExpiry(): string | null {
  const value = storage()?.getItem(EXPIRES_KEY);
  return value && !Number.isNaN(Date.parse(value)) ? value : null;
}

export function saveToken(token: string, expiresAt: string | null = null): void {
  const store = storage();
  store?.setItem(KEY, token.trim());
  if (expiresAt) store?.setItem(EXPIRES_KEY, expiresAt);
  else store?.removeItem(EXPIRES_KEY);
}

export function clearToken(): void {
  storage()?.removeItem(KEY);
  storage()?.removeItem(EXPIRES_KEY);
}
