// The token lives in sessionStorage: it survives a reload of the tab but not closing it, and other tabs (or
// other sites) never see it. A token is a credential; localStorage would keep it on disk indefinitely.
const KEY = 'leasehold.token';

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

export function saveToken(token: string): void {
  storage()?.setItem(KEY, token.trim());
}

export function clearToken(): void {
  storage()?.removeItem(KEY);
}
