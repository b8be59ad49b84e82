import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef, useState } from 'react';
import type { Api } from '../api/client';
import { errorText, unwrap } from '../api/errors';
import { closeReasonText, isFinalClose, noticeText } from './close-reason';

type Status =
  | { kind: 'requesting' }
  | { kind: 'connecting' }
  | { kind: 'open' }
  | { kind: 'closed'; text: string; final: boolean }
  | { kind: 'failed'; text: string };

interface Props {
  api: Api;
  nodeId: string;
  nodeName: string;
  onClose: () => void;
  /**
   * The lease is no longer active (the page polls it). Whatever code the close came with (at the end the node's
   * console may close a moment before Leasehold's own cut), access is over: say so, and offer no reconnect.
   */
  leaseOver?: boolean;
  /** For tests: the WebSocket constructor. */
  WebSocketImpl?: typeof WebSocket;
}

/**
 * The node's serial console in the browser: POST /v1/nodes/{id}/console gives a WebSocket URL with a short-lived
 * token; bytes go both ways (binary frames from the node, text frames for Leasehold's `[leasehold]` notices,
 * keystrokes as text); the close code and reason say why it ended (close-reason.ts). Leaving revokes the token,
 * as the CLI does, so the URL is good for nothing afterwards.
 */
export default function SerialConsole({ api, nodeId, nodeName, onClose, leaseOver = false, WebSocketImpl = WebSocket }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const [status, setStatus] = useState<Status>({ kind: 'requesting' });
  const [notice, setNotice] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  const detachRef = useRef<() => void>(() => {});
  const section = useRef<HTMLElement>(null);

  // Opened from a node's row, the console is drawn below the allocations, often out of sight: bring it into view
  // (xterm.js also draws nothing while off-screen, so the first lines would wait for a scroll).
  useEffect(() => {
    section.current?.scrollIntoView?.({ block: 'nearest' });
  }, [nodeId]);

  useEffect(() => {
    const term = new Terminal({
      cursorBlink: true,
      scrollback: 5000,
      fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace',
      fontSize: 14,
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(host.current!);
    const refit = () => {
      try {
        fit.fit();
      } catch {
        /* not laid out yet (hidden): the next resize fits it */
      }
    };
    refit();
    const resize = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(refit);
    resize?.observe(host.current!);

    let ws: WebSocket | null = null;
    let consoleId: string | null = null;
    let closedByUs = false;
    let gone = false;

    const revoke = () => {
      if (!consoleId) return;
      const id = consoleId;
      consoleId = null;
      // Best effort: after the lease ended the token is refused anyway.
      void api.DELETE('/v1/consoles/{id}', { params: { path: { id } } }).catch(() => {});
    };

    (async () => {
      try {
        const created = unwrap(await api.POST('/v1/nodes/{id}/console', { params: { path: { id: nodeId } } }));
        consoleId = created.id;
        if (gone) return revoke();
        setStatus({ kind: 'connecting' });
        ws = new WebSocketImpl(created.url);
        ws.binaryType = 'arraybuffer';
        ws.onopen = () => {
          setStatus({ kind: 'open' });
          term.focus();
        };
        ws.onmessage = (event: MessageEvent) => {
          if (typeof event.data === 'string') {
            term.write(event.data);
            const text = noticeText(event.data);
            if (text) setNotice(text);
          } else {
            term.write(new Uint8Array(event.data as ArrayBuffer));
          }
        };
        ws.onclose = (event: CloseEvent) => {
          const text = closeReasonText({ code: event.code, reason: event.reason, byUs: closedByUs });
          if (!gone) {
            term.write(`\r\n\x1b[1m[${text}]\x1b[0m\r\n`);
            setStatus({ kind: 'closed', text, final: isFinalClose(event.code) });
          }
          revoke();
        };
      } catch (err) {
        if (!gone) setStatus({ kind: 'failed', text: errorText(err) });
      }
    })();

    const typed = term.onData((data) => {
      if (ws?.readyState === WebSocket.OPEN) ws.send(data);
    });
    // Some keys (e.g. in mouse or meta modes) come as raw bytes in a binary string.
    const raw = term.onBinary((data) => {
      if (ws?.readyState === WebSocket.OPEN) ws.send(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff));
    });

    detachRef.current = () => {
      closedByUs = true;
      if (ws && ws.readyState <= WebSocket.OPEN) ws.close(1000, 'detached');
      else revoke();
    };

    return () => {
      gone = true;
      closedByUs = true;
      typed.dispose();
      raw.dispose();
      resize?.disconnect();
      if (ws && ws.readyState <= WebSocket.OPEN) ws.close(1000, 'detached');
      revoke();
      term.dispose();
    };
  }, [api, nodeId, attempt, WebSocketImpl]);

  const live = status.kind === 'open' || status.kind === 'connecting' || status.kind === 'requesting';
  const statusText =
    status.kind === 'requesting'
      ? 'Asking for a console…'
      : status.kind === 'connecting'
        ? 'Connecting…'
        : status.kind === 'open'
          ? 'Connected. Keys typed in the terminal go to the node’s serial line.'
          : status.text;

  return (
    <section ref={section} className="console card" aria-labelledby="console-title">
      <div className="row spread">
        <h2 id="console-title">Serial console: <span className="mono">{nodeName}</span></h2>
        <div className="row">
          {live ? (
            <button type="button" className="secondary small" onClick={() => detachRef.current()}>Detach</button>
          ) : (
            !leaseOver && ((status.kind === 'closed' && !status.final) || status.kind === 'failed') ? (
              <button type="button" className="small" onClick={() => { setNotice(null); setStatus({ kind: 'requesting' }); setAttempt((a) => a + 1); }}>
                Reconnect
              </button>
            ) : null
          )}
          <button type="button" className="secondary small" onClick={onClose}>Close</button>
        </div>
      </div>
      <p className={`console-status console-${status.kind}`} role="status" aria-live="polite" data-testid="console-status">
        {statusText}
      </p>
      {leaseOver && !live && (
        <p className="console-notice" role="status">
          The lease is over: access to this node has ended.
        </p>
      )}
      {notice && (
        <p className="console-notice small" aria-live="polite">
          <strong>Leasehold:</strong> {notice}
        </p>
      )}
      <div ref={host} className="terminal" aria-label={`Terminal of ${nodeName}`} />
    </section>
  );
}
