import { setTimeout as delay } from 'node:timers/promises';
import { ApiClient } from './client.js';
import { resolveSettings, type ClientSettings, type Env } from './config.js';
import { renderJson } from './output.js';

/** Keyboard input (process.stdin); only `leasehold console` reads it. */
export type CliInput = NodeJS.ReadableStream & { readonly isTTY?: boolean; setRawMode?(mode: boolean): unknown };

/** Where a run reads and writes: the process's streams in production, buffers in tests. */
export interface CliIo {
  /** Bytes as well as text: `leasehold console` passes the node's output through unchanged. */
  readonly stdout: { write(chunk: string | Uint8Array): unknown };
  readonly stderr: { write(chunk: string): unknown };
  readonly env: Env;
  readonly stdin?: CliInput;
  /** The clock for `--expires-in`; the real one unless a test fixes it. */
  readonly now?: () => Date;
  /** How `--wait` pauses between polls; the real timer unless a test makes it instant. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The options every command accepts (declared on the program, read when an action runs). */
export interface GlobalOptions {
  readonly url?: string;
  readonly token?: string;
  readonly json?: boolean;
}

/** What a command action needs: settings, an API client, and the two output streams. */
export class CliContext {
  /** Values that must never be printed, even inside an unexpected error message. */
  readonly secrets = new Set<string>();

  constructor(
    readonly io: CliIo,
    private readonly readGlobals: () => GlobalOptions,
  ) {}

  get globals(): GlobalOptions {
    return this.readGlobals();
  }

  get json(): boolean {
    return this.globals.json === true;
  }

  now(): Date {
    return this.io.now ? this.io.now() : new Date();
  }

  sleep(ms: number): Promise<void> {
    return this.io.sleep ? this.io.sleep(ms) : delay(ms);
  }

  async settings(): Promise<ClientSettings> {
    const settings = await resolveSettings(this.globals, this.io.env);
    if (settings.token) this.secrets.add(settings.token);
    return settings;
  }

  async client(): Promise<ApiClient> {
    const settings = await this.settings();
    return new ApiClient(settings.url, settings.token);
  }

  /** Data for the user: stdout. */
  out(text: string): void {
    this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Notes, hints and errors: stderr, so stdout stays parseable. */
  note(text: string): void {
    this.io.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** `--json` prints the server's JSON as received; otherwise the table `render` builds from it. */
  print(value: unknown, render: () => string): void {
    this.out(this.json ? renderJson(value) : render());
  }
}
