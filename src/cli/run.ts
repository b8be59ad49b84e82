import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { registerAuthCommands } from './commands/auth.js';
import { registerConsoleCommand } from './commands/console.js';
import { registerEventCommands } from './commands/event.js';
import { registerLeaseCommands } from './commands/lease.js';
import { registerLeaseNodeCommands } from './commands/lease-nodes.js';
import { registerLeaseTimeCommands } from './commands/lease-time.js';
import { registerNetworkCommands } from './commands/network.js';
import { registerNodeCommands } from './commands/node.js';
import { registerOfferCommands } from './commands/offer.js';
import { registerProjectCommands } from './commands/project.js';
import { registerServeCommand } from './commands/serve.js';
import { registerTokenCommands } from './commands/token.js';
import { registerUsageCommand } from './commands/usage.js';
import { registerUserCommands } from './commands/user.js';
import { DEFAULT_URL } from './config.js';
import { CliContext, type CliIo, type GlobalOptions } from './context.js';
import { ApiError, CliError, CommandFailedError, KeystoneError, UnreachableError, UsageError } from './errors.js';

export type { CliIo } from './context.js';

/** Exit codes: the contract scripts rely on. */
export const EXIT = { ok: 0, api: 1, usage: 2, unreachable: 3 } as const;

const HELP_FOOTER = `
Credentials (highest first): --token; --os-cloud NAME (a cloud of clouds.yaml); LEASEHOLD_TOKEN; OS_CLOUD;
the OS_* variables when OS_AUTH_URL is set; the file written by \`leasehold login\` ($LEASEHOLD_CONFIG or
~/.config/leasehold/config.json: a token, or a cloud's name). Server URL: --url, LEASEHOLD_URL, the saved one,
then with Keystone credentials the catalog ("leasehold" service, else "baremetal" without /baremetal), else
${DEFAULT_URL}.

Keystone: clouds.yaml is read from ./, $XDG_CONFIG_HOME/openstack/ or ~/.config/openstack/, /etc/openstack/
(the first found; secure.yaml from the same places merged over it). OS_AUTH_TYPE (auth_type) is password
(default), v3password, v3applicationcredential, token or v3token; also OS_AUTH_URL, OS_USERNAME/OS_USER_ID,
OS_PASSWORD, OS_PROJECT_NAME/OS_PROJECT_ID, OS_USER_DOMAIN_NAME/_ID, OS_PROJECT_DOMAIN_NAME/_ID (names default
to the domain "default"), OS_APPLICATION_CREDENTIAL_ID/_NAME/_SECRET, OS_TOKEN, OS_SYSTEM_SCOPE=all,
OS_INTERFACE (public), OS_REGION_NAME. The token (sent as X-Auth-Token) is cached in ~/.cache/leasehold/
($XDG_CACHE_HOME) until a minute before it expires; a 401 gets one new token and one retry.

Output: tables by default; --json prints the server's JSON. Lists show one page and say on stderr
how to get more (--all or --marker).

Exit codes: 0 ok, 1 the server (or Keystone) refused (error printed with its code), 2 usage error,
3 the server (or Keystone) could not be reached.

Examples:
  leasehold login --url http://127.0.0.1:8080 --token lh_...
  leasehold --os-cloud mycloud node list         (Keystone credentials of clouds.yaml)
  leasehold node list --owner physics-lab --all
  leasehold offer create gpu-01 --max-lease 5d
  leasehold console gpu-01                       (Ctrl-] detaches)
  leasehold lease create --need '3:memory >= 48GiB and gpus >= 1' --need '1:memory >= 16GiB and disk >= 1TB' --for 3d
  leasehold project set physics-lab --max-nodes 10 --max-lease-duration 5d
  leasehold token create --user <user-id> --expires-in 30d`;

function version(): string {
  try {
    // ../../package.json from both src/cli (tests) and dist/cli (installed).
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function buildProgram(io: CliIo, ctx: CliContext): Command {
  const program = new Command('leasehold')
    .description('Leasehold: lease bare-metal nodes from a shared pool (client and server)')
    .version(version(), '-V, --version', 'print the version')
    .option('--url <url>', `server URL (env LEASEHOLD_URL; default ${DEFAULT_URL})`)
    .option('--token <token>', 'API token (env LEASEHOLD_TOKEN)')
    .option('--os-cloud <name>', 'Keystone credentials: a cloud of clouds.yaml (env OS_CLOUD)')
    .option('--json', "print the server's JSON instead of a table")
    .helpCommand('help [command]', 'show help for a command')
    .addHelpText('after', HELP_FOOTER)
    .showSuggestionAfterError(true)
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      // Commander echoes arguments in its errors ("unknown option '--tokn=...'"): redact those too.
      writeErr: (text) => io.stderr.write(redact(text, ctx.secrets)),
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    // Commander must not call process.exit: `run` returns the code so it can run in-process (tests).
    .exitOverride();

  registerServeCommand(program);
  registerAuthCommands(program, ctx);
  registerProjectCommands(program, ctx);
  registerUserCommands(program, ctx);
  registerTokenCommands(program, ctx);
  registerNodeCommands(program, ctx);
  registerNetworkCommands(program, ctx);
  registerConsoleCommand(program, ctx);
  registerOfferCommands(program, ctx);
  registerLeaseCommands(program, ctx);
  registerLeaseNodeCommands(program, ctx);
  registerLeaseTimeCommands(program, ctx);
  registerEventCommands(program, ctx);
  registerUsageCommand(program, ctx);
  return program;
}

/**
 * Runs one `leasehold` command line (without the node and script arguments) and returns its exit code.
 * Everything goes through `io`: nothing here reads process.env or calls process.exit.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let program: Command | undefined;
  const ctx = new CliContext(io, () => program?.opts<GlobalOptions>() ?? {});
  program = buildProgram(io, ctx);
  const flagToken = tokenInArgv(argv);
  if (flagToken) ctx.secrets.add(flagToken);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    const code = report(err, io, ctx.secrets);
    // Under --json a script reads stdout: the failure is there too, in the API's one error shape, same exit code.
    if (code !== EXIT.ok && (argv.includes('--json') || program?.opts<GlobalOptions>().json === true)) {
      io.stdout.write(`${redact(JSON.stringify({ error: errorShape(err) }, null, 2), ctx.secrets)}\n`);
    }
    return code;
  }
}

/** A failure as `{code, message, details?}`: the server's own for an API error, the CLI's kind of failure otherwise. */
function errorShape(err: unknown): { code: string; message: string; details?: Readonly<Record<string, unknown>> } {
  if (err instanceof ApiError) return { code: err.code, message: err.message, ...(Object.keys(err.details).length > 0 ? { details: err.details } : {}) };
  const message = (err instanceof Error ? err.message : String(err)).replace(/^error: /, '').trim();
  if (err instanceof CommanderError || err instanceof UsageError) return { code: 'usage', message };
  if (err instanceof UnreachableError) return { code: 'unreachable', message };
  if (err instanceof KeystoneError) return { code: 'keystone', message };
  if (err instanceof CommandFailedError) return { code: 'command_failed', message };
  return { code: 'internal', message };
}

/** What to do next, for the refusals that are nobody's mistake. */
const HINTS: Readonly<Record<string, string>> = {
  node_busy: 'Ironic is in the middle of another operation on this node (it holds a lock meanwhile); run the same command again in a few seconds',
  backend_unavailable: 'Ironic (or the database) cannot be reached right now; nothing was changed: try again shortly',
};

/** Prints a failure on stderr (never a secret) and picks the exit code. */
function report(err: unknown, io: CliIo, secrets: ReadonlySet<string>): number {
  // Commander has already printed its own message (or the help); only the code is left to choose.
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  const write = (text: string) => io.stderr.write(`${redact(text, secrets)}\n`);
  if (err instanceof ApiError) {
    write(`error: ${err.message} (${err.code}${err.status ? `, HTTP ${err.status}` : ''})`);
    const details = Object.entries(err.details);
    if (details.length > 0) write(`details: ${JSON.stringify(err.details)}`);
    const hint = HINTS[err.code];
    if (hint) write(`hint: ${hint}`);
    return err.exitCode;
  }
  if (err instanceof CliError) {
    write(`error: ${err.message}`);
    return err.exitCode;
  }
  // A bug or an unexpected failure (e.g. from the server code under `serve`): say what it was, no stack dump.
  write(`error: ${err instanceof Error ? err.message : String(err)}`);
  return EXIT.api;
}

function redact(text: string, secrets: ReadonlySet<string>): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('***');
  return out;
}

/** The value of `--token X` / `--token=X`, known before parsing so even a parse error cannot print it. */
function tokenInArgv(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? '';
    if (arg === '--token') return argv[i + 1];
    if (arg.startsWith('--token=')) return arg.slice('--token='.length);
  }
  return undefined;
}
