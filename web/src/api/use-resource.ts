import { useCallback, useEffect, useRef, useState } from 'react';

export interface Resource<T> {
  data: T | undefined;
  error: unknown;
  /** True until the first answer (success or failure); reloads keep showing the last data. */
  loading: boolean;
  reload: () => void;
}

export interface ResourceOptions<T> {
  /** Poll again this many ms after each successful load; a function decides from the data (null stops polling). */
  pollMs?: number | ((data: T) => number | null);
}

/**
 * Loads data and keeps it: a small stand-in for a query library. `key` decides when to start over (e.g. the
 * lease id or the expression); loads that finish after a newer one started are dropped (the signal aborts them).
 */
export function useResource<T>(
  load: (signal: AbortSignal) => Promise<T>,
  key: unknown[],
  options: ResourceOptions<T> = {},
): Resource<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const [generation, setGeneration] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const pollRef = useRef(options.pollMs);
  pollRef.current = options.pollMs;
  const keyText = JSON.stringify(key);
  const lastKey = useRef(keyText);

  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (lastKey.current !== keyText) {
      // A different thing is being loaded: don't show the previous one's data meanwhile.
      lastKey.current = keyText;
      setState({ data: undefined, error: undefined, loading: true });
    }
    loadRef.current(controller.signal).then(
      (data) => {
        if (controller.signal.aborted) return;
        setState({ data, error: undefined, loading: false });
        const poll = pollRef.current;
        const ms = typeof poll === 'function' ? poll(data) : poll;
        if (ms != null) timer = setTimeout(() => setGeneration((g) => g + 1), ms);
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
    return () => {
      controller.abort();
      if (timer) clearTimeout(timer);
    };
  }, [keyText, generation]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}
