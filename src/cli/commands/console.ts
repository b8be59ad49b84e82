import type { Command } from 'commander';
import { WebSocket, type RawData } from 'ws';
import type { CliContext, CliInput } from '../context.js';
import { CommandFailedError, UnreachableError, UsageError } from '../errors.js';
import { RefKind, resolveId } from '../resolve-ref.js';

/** What POST /v1/nodes/{id}/console answers (the url carries the console token: a secret). */
interface OpenedConsole {
  readonly id: string;
  readonly node_id: string;
  readonly url: string;
  readonly expires_at: string;
}

/** Ctrl-] detaches, as in telnet and virsh console. */
const ESCAPE = 0x1d;
/** When input ends (a pipe), output still arriving is shown for this long before detaching. */
const LINGER_MS = 1_000;
/** Close codes that mean "not let in" rather than "cut off" (README, "Serial console"). */
const REFUSALS = new Set([4401, 4403, 4404, 4429]);

type Outcome =
  | { readonly kind: 'detached' }
  | { readonly kind: 'closed'; readonly code: number; readonly reason: string }
  | { readonly kind: 'failed'; readonly error: Error };

export function registerConsoleCommand(program: Command, ctx: CliContext): void {
  program
    .command('console')
    .description("attach the terminal to a node's serial console (Ctrl-] detaches)")
    .argument('<node>', 'node uuid, name or id prefix')
    .addHelpText(
      'after',
      `
The owner, the operator, or a member of the project leasing the node right now. Keystrokes go to the node
as typed (the terminal is in raw mode: Ctrl-C reaches the node); Ctrl-] detaches. The connection is cut the
moment the lease ends. Exit codes: 0 detached; 1 refused, or closed by the server (the reason is printed).
With input from a pipe, it detaches ${LINGER_MS / 1000} s after the input ends.`,
    )
    .action(async (node: string) => {
      const input = ctx.io.stdin;
      if (!input) throw new UsageError('leasehold console needs an input stream (a terminal)');
      const client = await ctx.client();
      const opened = await client.post<OpenedConsole>(`/v1/nodes/${encodeURIComponent(await resolveId(ctx, RefKind.Node, node))}/console`);
      const token = new URL(opened.url).searchParams.get('token');
      if (token) ctx.secrets.add(token);
      try {
        const outcome = await attach(ctx, input, opened, node);
        if (outcome.kind === 'failed') throw outcome.error;
        if (outcome.kind === 'closed') {
          const how = REFUSALS.has(outcome.code) ? 'refused' : 'closed by the server';
          throw new CommandFailedError(`the console was ${how}: ${outcome.reason || 'no reason given'} (code ${outcome.code})`);
        }
        ctx.note('\r\n[detached]');
      } finally {
        // The token has served its purpose: revoke it so the URL cannot be used again. Best effort.
        await client.delete(`/v1/consoles/${encodeURIComponent(opened.id)}`).catch(() => undefined);
      }
    });
}

/** Bridges the terminal and the console's WebSocket until detached or closed; always restores the terminal. */
function attach(ctx: CliContext, input: CliInput, opened: OpenedConsole, node: string): Promise<Outcome> {
  return new Promise<Outcome>((resolve) => {
    const ws = new WebSocket(opened.url);
    const raw = input.isTTY === true && typeof input.setRawMode === 'function';
    let linger: NodeJS.Timeout | undefined;
    let finished = false;

    const finish = (outcome: Outcome) => {
      if (finished) return;
      finished = true;
      clearTimeout(linger);
      input.off('data', onInput);
      input.off('end', onEnd);
      if (raw) input.setRawMode!(false);
      input.pause();
      if (outcome.kind === 'detached' && ws.readyState === WebSocket.OPEN) ws.close(1000, 'detached');
      if (outcome.kind !== 'closed') ws.terminate();
      resolve(outcome);
    };

    const onInput = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      const escape = bytes.indexOf(ESCAPE);
      const keys = escape === -1 ? bytes : bytes.subarray(0, escape);
      if (keys.length > 0 && ws.readyState === WebSocket.OPEN) ws.send(keys, { binary: true });
      if (escape !== -1) finish({ kind: 'detached' });
    };
    const onEnd = () => {
      linger = setTimeout(() => finish({ kind: 'detached' }), LINGER_MS);
    };

    ws.on('open', () => {
      ctx.note(`Attached to the serial console of ${node}. Escape character is '^]' (Ctrl-]): type it to detach.`);
      if (raw) input.setRawMode!(true);
      input.on('data', onInput);
      input.once('end', onEnd);
      input.resume();
    });
    ws.on('message', (data: RawData) => {
      // Binary frames are the node's bytes and text frames Leasehold's notices: both belong on the terminal.
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      ctx.io.stdout.write(bytes);
    });
    ws.on('close', (code: number, reason: Buffer) => finish({ kind: 'closed', code, reason: reason.toString('utf8') }));
    ws.on('unexpected-response', (_req, res) => {
      finish({ kind: 'failed', error: new CommandFailedError(`the server did not accept the console connection: HTTP ${res.statusCode ?? '?'}`) });
    });
    ws.on('error', (err: Error & { code?: string }) => {
      finish({ kind: 'failed', error: new UnreachableError(`cannot connect to the console: ${err.code ?? err.message}`) });
    });
  });
}
