import { setTimeout as delay } from 'node:timers/promises';
import { ApiClient } from './client.js';
import { DEFAULT_URL, PROCESS_PLACES, resolveSettings, type ClientSettings, type Env } from './config.js';
import { buildAuthRequest } from './keystone/auth-request.js';
import { leaseholdUrlFromCatalog } from './keystone/catalog.js';
import { secretsOf } from './keystone/cloud-options.js';
import type { CloudFilePlaces } from './keystone/clouds-yaml.js';
import { KeystoneSession } from './keystone/keystone-session.js';
import { TokenCache, tokenCacheDir } from './keystone/token-cache.js';
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
  /** The clock for `--expires-in` and the Keystone token cache; the real one unless a test fixes it. */
  readonly now?: () => Date;
  /** How `--wait` pauses between polls; the real timer unless a test makes it instant. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Where `./clouds.yaml` and `/etc/openstack` are: the process's own unless a test gives others. */
  readonly cloudFilePlaces?: CloudFilePlaces;
}

/** The options every command accepts (declared on the program, read when an action runs). */
export interface GlobalOptions {
  readonly url?: string;
  readonly token?: string;
  readonly osCloud?: string;
  readonly json?: boolean;
}

/** A client ready to call, with where its URL and token come from (for `whoami`). */
export interface Connection {
  readonly client: ApiClient;
  readonly settings: ClientSettings;
  /** How the URL was found: a setting's name, or the catalog entry. */
  readonly urlFrom: string;
  /** With Keystone credentials: the token's source and holder. */
  readonly keystone: KeystoneSession | undefined;
}

/** What a command action needs: settings, an API client, and the two output streams. */
export class CliContext {
  /** Values that must never be printed, even inside an unexpected error message. */
  readonly secrets = new Set<string>();
  private connecting: Promise<Connection> | undefined;

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

  get cloudFilePlaces(): CloudFilePlaces {
    return this.io.cloudFilePlaces ?? PROCESS_PLACES();
  }

  now(): Date {
    return this.io.now ? this.io.now() : new Date();
  }

  sleep(ms: number): Promise<void> {
    return this.io.sleep ? this.io.sleep(ms) : delay(ms);
  }

  async settings(): Promise<ClientSettings> {
    const settings = await resolveSettings(this.globals, this.io.env, this.cloudFilePlaces);
    if (settings.token) this.secrets.add(settings.token);
    if (settings.keystone) for (const secret of secretsOf(settings.keystone.options)) this.secrets.add(secret);
    return settings;
  }

  /** The Keystone token cache of this user. */
  tokenCache(): TokenCache {
    return new TokenCache(tokenCacheDir(this.io.env));
  }

  /** A Keystone session for credentials (the token from the cache or from Keystone; never printed). */
  keystoneSession(options: NonNullable<ClientSettings['keystone']>['options']): KeystoneSession {
    const request = buildAuthRequest(options);
    for (const secret of request.secrets) this.secrets.add(secret);
    return new KeystoneSession(request, this.tokenCache(), () => this.now(), { cacert: options.cacert }, (token) =>
      this.secrets.add(token),
    );
  }

  /** The one connection of this run: settings resolved, Keystone asked (or its cached token used) at most once. */
  connection(): Promise<Connection> {
    this.connecting ??= this.connect();
    return this.connecting;
  }

  async client(): Promise<ApiClient> {
    return (await this.connection()).client;
  }

  private async connect(): Promise<Connection> {
    const settings = await this.settings();
    if (!settings.keystone) {
      return { client: new ApiClient(settings.url ?? DEFAULT_URL, settings.token), settings, urlFrom: settings.urlSource, keystone: undefined };
    }
    const { options } = settings.keystone;
    const session = this.keystoneSession(options);
    let url = settings.url;
    let urlFrom: string = settings.urlSource;
    if (url === undefined) {
      const issued = await session.issued();
      ({ url, source: urlFrom } = leaseholdUrlFromCatalog(issued.catalog, { interface: options.interface, region: options.regionName }));
    }
    return { client: new ApiClient(url, session), settings, urlFrom, keystone: session };
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
