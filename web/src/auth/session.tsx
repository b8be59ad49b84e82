import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { createApi, type Api, type Me } from '../api/client';
import { ApiError, unwrap } from '../api/errors';
import type { Viewer } from '../nav';
import { clearToken, readToken, saveToken } from './token-storage';

export type SessionState =
  | { status: 'signed-out'; notice?: string }
  | { status: 'checking' }
  | { status: 'unreachable'; message: string }
  | { status: 'signed-in'; viewer: Viewer };

interface SessionContextValue {
  state: SessionState;
  api: Api;
  /** Checks the token against /v1/me; resolves with an error sentence when it is refused, null on success. */
  signIn(token: string): Promise<string | null>;
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
  };
}

export function SessionProvider({ children, fetch }: { children: ReactNode; fetch?: typeof globalThis.fetch }) {
  const [state, setState] = useState<SessionState>(() => (readToken() ? { status: 'checking' } : { status: 'signed-out' }));
  const [attempt, setAttempt] = useState(0);
  const stateRef = useRef(state);
  stateRef.current = state;

  const signOut = useCallback((notice?: string) => {
    clearToken();
    setState(notice ? { status: 'signed-out', notice } : { status: 'signed-out' });
  }, []);

  const api = useMemo(
    () =>
      createApi({
        token: readToken,
        fetch,
        // Only a session that was signed in ends here; a wrong token at sign-in is answered by signIn itself.
        onUnauthorized: () => {
          if (stateRef.current.status === 'signed-in') signOut('Your token is no longer valid (revoked or expired). Sign in again.');
        },
      }),
    [fetch, signOut],
  );

  // A token kept from earlier in this tab: check it is still good.
  useEffect(() => {
    if (state.status !== 'checking') return;
    const controller = new AbortController();
    loadViewer(api, controller.signal).then(
      (viewer) => setState({ status: 'signed-in', viewer }),
      (err: unknown) => {
        if (controller.signal.aborted) return;
        if (err instanceof ApiError && err.status === 401) signOut('Your token is no longer valid. Sign in again.');
        else setState({ status: 'unreachable', message: err instanceof Error ? err.message : String(err) });
      },
    );
    return () => controller.abort();
  }, [api, attempt, state.status, signOut]);

  const signIn = useCallback(
    async (token: string) => {
      const candidate = token.trim();
      if (!candidate) return 'Enter a token.';
      const probe = createApi({ token: () => candidate, fetch });
      try {
        const viewer = await loadViewer(probe);
        saveToken(candidate);
        setState({ status: 'signed-in', viewer });
        return null;
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return 'That token was not accepted: it is unknown, revoked or expired.';
        if (err instanceof ApiError) return err.message;
        return `Could not reach the Leasehold server (${err instanceof Error ? err.message : String(err)}).`;
      }
    },
    [fetch],
  );

  const retry = useCallback(() => {
    setState({ status: 'checking' });
    setAttempt((a) => a + 1);
  }, []);

  const value = useMemo(() => ({ state, api, signIn, signOut, retry }), [state, api, signIn, signOut, retry]);
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
