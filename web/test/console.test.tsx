import { act, cleanup, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, expect, test, vi } from 'vitest';
import { createApi } from '../src/api/client';
import { closeReasonText, isFinalClose, noticeText } from '../src/console/close-reason';
import { fakeApi } from './fake-api';

// xterm.js needs a real layout engine; what matters here is what the page does around it.
const written: string[] = [];
let typeInto: ((data: string) => void) | null = null;
vi.mock('@xterm/xterm', () => ({
  Terminal: class {
    loadAddon() {}
    open() {}
    focus() {}
    dispose() {}
    write(data: string | Uint8Array) {
      written.push(typeof data === 'string' ? data : new TextDecoder().decode(data));
    }
    onData(fn: (d: string) => void) {
      typeInto = fn;
      return { dispose() {} };
    }
    onBinary() {
      return { dispose() {} };
    }
  },
}));
vi.mock('@xterm/addon-fit', () => ({ FitAddon: class { fit() {} } }));
vi.mock('@xterm/xterm/css/xterm.css', () => ({}));

class FakeSocket {
  static last: FakeSocket | null = null;
  static readonly OPEN = 1;
  readyState = 0;
  binaryType = 'blob';
  sent: unknown[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: ((e: { code: number; reason: string }) => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.last = this;
  }
  send(data: unknown) {
    this.sent.push(data);
  }
  close(code = 1000, reason = '') {
    this.serverClose(code, reason);
  }
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  serverClose(code: number, reason: string) {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

afterEach(() => {
  cleanup();
  written.length = 0;
});

test('close codes read as sentences, with the server’s reason', () => {
  expect(closeReasonText({ code: 4410, reason: 'the lease ended at 2030-01-01T00:00:00.000Z' })).toBe(
    'Access ended with the lease: the lease ended at 2030-01-01T00:00:00.000Z (code 4410).',
  );
  expect(closeReasonText({ code: 4401, reason: '' })).toBe('The console link was refused: unknown, expired or revoked (code 4401).');
  expect(closeReasonText({ code: 1000, reason: 'detached', byUs: true })).toBe('Console detached.');
  expect(closeReasonText({ code: 4999, reason: 'odd' })).toBe('The console connection closed: odd (code 4999).');
  expect(closeReasonText({ code: 4429, reason: 'this console URL already has 4 connections open' })).toBe(
    'Too many console connections, or too many refused tokens, for now: this console URL already has 4 connections open (code 4429).',
  );
  expect(isFinalClose(4410)).toBe(true);
  expect(isFinalClose(4503)).toBe(false);
  expect(noticeText('[leasehold] turning the console on, waiting up to 60 s\r\n')).toBe('turning the console on, waiting up to 60 s');
  expect(noticeText('login: ')).toBeNull();
});

test('the console connects to the URL it is given, carries bytes both ways, shows notices and why it closed', async () => {
  const user = userEvent.setup();
  const api = fakeApi({
    'POST /v1/nodes/:id/console': () => ({
      id: 'c1', node_id: 'n1', user_id: 'u1', created_at: '', expires_at: '', revoked_at: null,
      url: 'ws://127.0.0.1:8080/v1/consoles/c1/stream?token=lhc_x',
    }),
    'DELETE /v1/consoles/:id': () => new Response(null, { status: 204 }),
  });
  const { default: SerialConsole } = await import('../src/console/serial-console');
  render(
    <SerialConsole
      api={createApi({ token: () => 'lh_t', fetch: api.fetch })}
      nodeId="n1"
      nodeName="gpu-01"
      onClose={() => {}}
      WebSocketImpl={FakeSocket as unknown as typeof WebSocket}
    />,
  );
  await vi.waitFor(() => expect(FakeSocket.last?.url).toBe('ws://127.0.0.1:8080/v1/consoles/c1/stream?token=lhc_x'));
  const socket = FakeSocket.last!;
  expect(socket.binaryType).toBe('arraybuffer');
  act(() => socket.open());
  expect(screen.getByTestId('console-status').textContent).toMatch(/Connected/);

  act(() => socket.onmessage?.({ data: '[leasehold] turning the console on\r\n' }));
  act(() => socket.onmessage?.({ data: new TextEncoder().encode('login: ').buffer }));
  expect(written.join('')).toContain('login: ');
  expect(screen.getByText(/turning the console on/, { selector: 'p' })).toBeTruthy();

  act(() => typeInto?.('root\r'));
  expect(socket.sent).toEqual(['root\r']);

  act(() => socket.serverClose(4410, 'the lease ended at 2030-01-01T00:00:00.000Z'));
  expect(screen.getByTestId('console-status').textContent).toBe(
    'Access ended with the lease: the lease ended at 2030-01-01T00:00:00.000Z (code 4410).',
  );
  // Access is over for good: no reconnect offered; the token is revoked as the CLI does.
  expect(screen.queryByRole('button', { name: 'Reconnect' })).toBeNull();
  await vi.waitFor(() => expect(api.requests.some((r) => r.method === 'DELETE' && r.url.endsWith('/v1/consoles/c1'))).toBe(true));
  await user.click(screen.getByRole('button', { name: 'Close' }));
});

test('once the lease is over, a close says so whatever its code, and offers no reconnect', async () => {
  const api = fakeApi({
    'POST /v1/nodes/:id/console': () => ({ id: 'c2', node_id: 'n1', user_id: 'u1', created_at: '', expires_at: '', revoked_at: null, url: 'ws://x/v1/consoles/c2/stream?token=t' }),
    'DELETE /v1/consoles/:id': () => new Response(null, { status: 204 }),
  });
  const { default: SerialConsole } = await import('../src/console/serial-console');
  const props = {
    api: createApi({ token: () => 'lh_t', fetch: api.fetch }),
    nodeId: 'n1',
    nodeName: 'gpu-01',
    onClose: () => {},
    WebSocketImpl: FakeSocket as unknown as typeof WebSocket,
  };
  const { rerender } = render(<SerialConsole {...props} />);
  await vi.waitFor(() => expect(FakeSocket.last?.url).toBe('ws://x/v1/consoles/c2/stream?token=t'));
  act(() => FakeSocket.last!.open());
  act(() => FakeSocket.last!.serverClose(4502, 'the serial console of gpu-01 closed the connection'));
  expect(screen.getByRole('button', { name: 'Reconnect' })).toBeTruthy();
  rerender(<SerialConsole {...props} leaseOver />);
  expect(screen.queryByRole('button', { name: 'Reconnect' })).toBeNull();
  expect(screen.getByText('The lease is over: access to this node has ended.')).toBeTruthy();
});
