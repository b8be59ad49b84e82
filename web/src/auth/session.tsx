import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { createApi, type Api, type Me, type Schemas } from '../api/client';
import { ApiError, unwrap } from '../api/errors';
import { formatTime } from '../lib/format';
import type { Viewer } from '../nav';
import { clearToken, readToken, readTokenExpiry, saveToken } from './token-storage';

export type SessionState =
  | { status: 'signed-out'; notice?: string }
  | { status: 'checking' }
  | { status: 'unreachable'; message: string }
  | {
      status: 'signed-in';
      viewer: Viewer;
      /** When the token expires (RFC 3339), when the sign-in said: Keystone's tokens; null for a pasted token. */
      expiresAt: string | null;
      /** A new number for every token: the pages are mounted afresh (and load again) when it changes. */
      generation: number;
    };

/** What the sign-in form sends to POST /v1/auth/tokens under Keystone (the third form, a token, is a switch). */
export type Credentials = Exclude<Schemas['SignIn'], { token: unknown }>;

interface SessionContextValue {
  state: SessionState;
  api: Api;
  /** A client that sends no token, for what needs none (GET /v1/auth/methods). */
  publicApi: Api;
  /** Checks the token against /v1/me; resolves with an error sentence when it is refused, null on success. */
  signIn(token: string): Promise<string | null>;
  /** Under Keystone: Leasehold obtains a token for these credentials. Rejects with the ApiError of a refusal. */
  signInWith(credentials: Credentials): Promise<void>;
  /** Under Keystone: a token for another of the user's projects replaces the current one; resolves with who that is. */
  switchProject(projectId: string): Promise<Viewer>;
  signOut(notice?: string): void;
  retry(): void;
}

const SessionContext = createContext<SessionContextValue | null>(null);

/** Who the token belongs to, and whether its project owns nodes (owners get the owner pages). */
export async function loadViewer(api: Api, signal?: AbortSignal): Promise<Viewer> {
  const me: Me = unwrap(await api.GET('/v1/me', { signal }));
  let ownsNodes = false;
  if (me.project) {
    const owned = unwrap(await api.GET('/v1/nodes', { params: { query: { owner: me.project.id, limit: 1 } }, signal }));
    ownsNodes = owned.nodes.length > 0;
  }
  return {
    userId: me.user.id,
    userName: me.user.name,
    role: me.user.role,
    project: me.project,
    ownsNodes,
    identity: me.identity === 'keystone' ? 'keystone' : 'local',
  };
}

/** Why a session ended with a 401: its known expiry has passed, or the token was refused before it. */
export function endedNotice(expiresAt: string | null, now: number = Date.now()): string {
  if (expiresAt && Date.parse(expiresAt) <= now) return `Your session expired at ${formatTime(expiresAt)}. Sign in again.`;
  return 'Your token is no longer valid (revoked or expired). Sign in again.';
}

export function SessionProvider({ children, fetch }: { children: ReactNode; fetch?: typeof globalThis.fetch }) {
  const [state, setState] = useState<SessionState>(() => (readToken() ? { status: 'checking' } : { status: 'signed-out' }));
  const [attempt, setAttempt] = useState(0);
  const stateRef = useRef(state);
  stateRef.current = state;
  const generation = useRef(0);

  /**
   * Revokes a Keystone token this UI obtained itself (a sign-in or a switch: those have an expiry; a pasted token
   * has none and may be in use elsewhere, so it is left alone). Fire and forget: a token not revoked still expires.
   */
  const revokeOwn = useCallback(
    (token: string | null, expiresAt: string | null) => {
      if (!token || !expiresAt) return;
      void createApi({ token: () => token, fetch })
        .DELETE('/v1/auth/tokens')
        .catch(() => undefined);
    },
    [fetch],
  );

  /** Ends the session; without a notice it is the user's own sign-out, which also revokes a token of ours. */
  const signOut = useCallback(
    (notice?: string) => {
      if (!notice) revokeOwn(readToken(), readTokenExpiry());
      clearToken();
      setState(notice ? { status: 'signed-out', notice } : { status: 'signed-out' });
    },
    [revokeOwn],
  );

  const api = useMemo(
    () =>
      createApi({
        token: readToken,
        fetch,
        // Only a session that was signed in ends here; a wrong token at sign-in is answered by signIn itself.
        onUnauthorized: () => {
          const current = stateRef.current;
          if (current.status === 'signed-in') signOut(endedNotice(current.expiresAt));
        },
      }),
    [fetch, signOut],
  );
  const publicApi = useMemo(() => createApi({ token: () => null, fetch }), [fetch]);

  /** Checks a new token (GET /v1/me) and only then keeps it: a refused one never replaces a good one. */
  const establish = useCallback(
    async (token: string, expiresAt: string | null): Promise<Viewer> => {
      const viewer = await loadViewer(createApi({ token: () => token, fetch }));
      saveToken(token, expiresAt);
      generation.current += 1;
      setState({ status: 'signed-in', viewer, expiresAt, generation: generation.current });
      return viewer;
    },
    [fetch],
  );

  // A token kept from earlier in this tab: check it is still good.
  useEffect(() => {
    if (state.status !== 'checking') return;
    const controller = new AbortController();
    loadViewer(api, controller.signal).then(
      (viewer) => {
        generation.current += 1;
        setState({ status: 'signed-in', viewer, expiresAt: readTokenExpiry(), generation: generation.current });
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        if (err instanceof ApiError && err.status === 401) signOut(endedNotice(readTokenExpiry()));
        else setState({ status: 'unreachable', message: err instanceof Error ? err.message : String(err) });
      },
    );
    return () => controller.abort();
  }, [api, attempt, state.status, signOut]);

  const signIn = useCallback(
    async (token: string) => {
      const candidate = token.trim();
      if (!candidate) return 'Enter a token.';
      try {
        // A pasted token's expiry is not known: the first 401 after it ends the session.
        await establish(candidate, null);
        return null;
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return 'That token was not accepted: it is unknown, revoked or expired.';
        if (err instanceof ApiError) return err.message;
        return `Could not reach the Leasehold server (${err instanceof Error ? err.message : String(err)}).`;
      }
    },
    [establish],
  );

  const signInWith = useCallback(
    async (credentials: Credentials) => {
      const signed = unwrap(await publicApi.POST('/v1/auth/tokens', { body: credentials }));
      await establish(signed.token, signed.expires_at);
    },
    [publicApi, establish],
  );

  const switchProject = useCallback(
    async (projectId: string) => {
      // Its own client, not `api`: Keystone refusing this project (the user lost its role there) must not end a
      // session whose token is still good. A token that has expired does end it, as any other request would.
      const current = createApi({ token: readToken, fetch });
      const [previous, previousExpiry] = [readToken(), readTokenExpiry()];
      try {
        const signed = unwrap(await current.POST('/v1/auth/tokens', { body: { token: { project: projectId } } }));
        const viewer = await establish(signed.token, signed.expires_at);
        revokeOwn(previous, previousExpiry); // the token of the project left: no longer anyone's
        return viewer;
      } catch (err) {
        const now = stateRef.current;
        if (err instanceof ApiError && err.status === 401 && now.status === 'signed-in' && now.expiresAt && Date.parse(now.expiresAt) <= Date.now()) {
          signOut(endedNotice(now.expiresAt));
        }
        throw err;
      }
    },
    [fetch, establish, signOut, revokeOwn],
  );

  const retry = useCallback(() => {
    setState({ status: 'checking' });
    setAttempt((a) => a + 1);
  }, []);

  const value = useMemo(
    () => ({ state, api, publicApi, signIn, signInWith, switchProject, signOut, retry }),
    [state, api, publicApi, signIn, signInWith, switchProject, signOut, retry],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionContextValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside <SessionProvider>');
  return value;
}

/** The API client, for pages (they render only when signed in). */
export function useApi(): Api {
  return useSession().api;
}

/** The signed-in viewer; pages render only inside the signed-in layout. */
export function useViewer(): Viewer {
  const { state } = useSession();
  if (state.status !== 'signed-in') throw new Error('useViewer while not signed in');
  return state.viewer;
}
