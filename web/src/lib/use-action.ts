import { useCallback, useRef, useState } from 'react';

export interface Action {
  busy: boolean;
  error: unknown;
  /** What the last successful run said, for a status line ("Power off requested"). */
  done: string | null;
  run(work: () => Promise<string | null | void>): Promise<boolean>;
  clear(): void;
}

/** A button's request: busy while it runs (so it is not sent twice), its error or its result kept for display. */
export function useAction(): Action {
  const [state, setState] = useState<{ busy: boolean; error: unknown; done: string | null }>({ busy: false, error: undefined, done: null });
  const running = useRef(false);
  const run = useCallback(async (work: () => Promise<string | null | void>) => {
    if (running.current) return false;
    running.current = true;
    setState({ busy: true, error: undefined, done: null });
    try {
      const done = (await work()) ?? null;
      setState({ busy: false, error: undefined, done });
      return true;
    } catch (error) {
      setState({ busy: false, error, done: null });
      return false;
    } finally {
      running.current = false;
    }
  }, []);
  const clear = useCallback(() => setState({ busy: false, error: undefined, done: null }), []);
  return { ...state, run, clear };
}
