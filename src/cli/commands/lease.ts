import { Option, type Command } from 'commander';
import { formatDuration } from '../../domain/duration.js';
import { LEASE_STATES, type Allocation, type Lease, type LeaseRefusalDetails, type Quote } from '../api-types.js';
import type { ApiClient } from '../client.js';
import type { CliContext } from '../context.js';
import { ApiError, CommandFailedError, UsageError } from '../errors.js';
import { formatShortDuration } from '../format.js';
import { fetchRef, RefKind, resolveId } from '../resolve-ref.js';
import { renderFields, renderJson, renderTable, type Cell } from '../output.js';
import { printList } from '../paging.js';
import { collect, collectNeed, parsePositiveDuration, parseTimestamp, type Need } from '../parsers.js';
import { listOptions, type ListFlags } from './list-options.js';
import { autoRenewBody, autoRenewOptions, endsIn, leaseTimeFields } from './lease-time-view.js';

const leasePath = (id: string) => `/v1/leases/${encodeURIComponent(id)}`;

/** `--wait` polls this often once the lease has started. */
export const POLL_INTERVAL_MS = 1_000;
/** Before a future start, polls this often at most (the lease can still be cancelled meanwhile). */
export const MAX_PAUSE_BEFORE_START_MS = 30_000;
const DEFAULT_WAIT_MS = 10 * 60_000;

/** Lease states `--wait` stops at; only `active` is success. */
const WAIT_ENDS: ReadonlySet<string> = new Set(['active', 'failed', 'cancelled', 'ending', 'ended']);

const SEED_EXAMPLE = "leasehold lease create --need '3:memory >= 48GiB and gpus >= 1' --need '1:memory >= 16GiB and disk >= 1TB' --for 3d";

function allocationState(a: Pick<Allocation, 'state' | 'step'>): string {
  return a.step ? `${a.state} (${a.step})` : a.state;
}

/**
 * Groups are numbered from 1 for people, as the server's explanations do ("group 1 (3 × ...)"); the JSON
 * (`--json`) has the same number as `group_number` beside the API's index `group` (from 0).
 */
function groupLabel(a: Pick<Allocation, 'group' | 'group_number'>): number {
  // A server from before group_number sends only the index.
  return a.group_number ?? a.group + 1;
}

function nodeLabel(a: Pick<Allocation, 'node_id' | 'node_name'>): string {
  return a.node_name ?? a.node_id;
}

/** What became of a node that left before the lease's end, or what is wrong with one it keeps. */
function nodeNote(a: Allocation, all: readonly Allocation[]): string | null {
  const notes: string[] = [];
  if (a.replaces) {
    const old = all.find((b) => b.node_id === a.replaces);
    notes.push(`replaces ${old ? nodeLabel(old) : a.replaces} from ${a.start}`);
  }
  if (a.leave_reason) notes.push(`${a.leave_reason} at ${a.end}`);
  // The sub-leasing chain (one level): where a sub-leased node comes from, and to whom this node is sub-leased.
  if (a.sublease_of) notes.push(`sublease of ${a.sublease_of.lease_name} (${a.sublease_of.project_name}, ${a.sublease_of.lease_id}) until ${a.sublease_of.end}`);
  for (const s of a.subleases ?? []) notes.push(`sub-leased to ${s.project_name} (${s.lease_name}, ${s.lease_id}) ${s.start} to ${s.end}, ${s.state}`);
  if (a.failure) notes.push(`failed: ${a.failure}`);
  return notes.length === 0 ? null : notes.join('; ');
}

function allocationTable(allocations: readonly Allocation[]): string {
  // The error and note columns only when there is something to show: the usual table stays narrow.
  const errors = allocations.some((a) => a.last_error);
  const notes = allocations.map((a) => nodeNote(a, allocations));
  const noted = notes.some((n) => n !== null);
  return renderTable(
    ['NODE', 'GROUP', 'STATE', ...(noted ? ['NOTE'] : []), ...(errors ? ['LAST ERROR'] : [])],
    allocations.map((a, i): Cell[] => [
      nodeLabel(a),
      groupLabel(a),
      allocationState(a),
      ...(noted ? [notes[i]] : []),
      ...(errors ? [a.last_error] : []),
    ]),
  );
}

function requestText(request: Lease['request']): string {
  const lines = (request.groups ?? []).map((group, i) => `group ${i + 1}: ${group.count} × ${group.where}`);
  if (request.nodes && request.nodes.length > 0) lines.push(`nodes: ${request.nodes.join(', ')}`);
  return lines.join('\n');
}

/** `replace_policy` as a person reads it. */
export const REPLACE_TEXT: Readonly<Record<Lease['replace_policy'], string>> = {
  auto: 'auto: a failed node is replaced at once',
  ask: 'ask: a failed node is reported; you ask for a substitute (lease replace)',
  never: 'never: a failed node is reported and kept',
};

/** `--replace`: what a lease does when one of its nodes fails. */
export function replaceOption(): Option {
  return new Option('--replace <policy>', 'when a node fails: auto (default) replaces it, ask tells you, never keeps it').choices(['auto', 'ask', 'never']);
}

function span(start: string, end: string): string | null {
  const ms = Date.parse(end) - Date.parse(start);
  return Number.isFinite(ms) && ms >= 0 ? formatDuration(ms) : null;
}

/** A lease as fields, then its allocations (which node serves which group, in which state). */
export function leaseView(l: Lease, now: Date | null = null): string {
  const fields = renderFields([
    ['id', l.id],
    ['name', l.name],
    // A server from before project_name sends only the id.
    ['project', l.project_name && l.project_name !== l.project_id ? `${l.project_name} (${l.project_id})` : l.project_id],
    ['state', l.state],
    ['start', l.start],
    ['end', l.end],
    ['duration', span(l.start, l.end)],
    ['request', requestText(l.request)],
    ['replace', REPLACE_TEXT[l.replace_policy]],
    ...leaseTimeFields(l, now),
    ['created at', l.created_at],
    ['updated at', l.updated_at],
  ]);
  return l.allocations.length === 0 ? fields : `${fields}\n${allocationTable(l.allocations)}`;
}

function quoteView(q: Quote): string {
  const fields = renderFields([
    ['start', q.start],
    ['end', q.end],
    ['duration', q.duration],
  ]);
  const table = renderTable(
    ['NODE', 'GROUP'],
    q.allocations.map((a) => [nodeLabel(a), groupLabel(a)]),
  );
  return `${fields}\n${table}`;
}

function leaseTable(leases: Lease[], now: Date): string {
  return renderTable(
    ['ID', 'NAME', 'PROJECT', 'STATE', 'START', 'END', 'ENDS IN', 'NODES'],
    leases.map((l) => [l.id, l.name, l.project_name ?? l.project_id, l.state, l.start, l.end, endsIn(l, now), l.allocations.length]),
  );
}

type RequestFlags = {
  name?: string;
  project?: string;
  node?: string[];
  need?: Need[];
  for?: number;
  end?: string;
  start?: string;
};

type CreateFlags = RequestFlags & { wait?: boolean; waitTimeout?: number; replace?: string; autoRenew?: number; renewUntil?: string; renewMaxTotal?: number };

/** The options `lease create` and `lease quote` share: what to lease and when. */
function requestOptions(command: Command): Command {
  return command
    .option('--name <name>', 'a name for the lease')
    .option('--project <project>', 'the project the lease is for (id or name): the operator leases for a project; default your own')
    .addOption(new Option('--node <node>', 'lease this node (uuid or name); repeat for more').argParser(collect))
    .addOption(
      new Option(
        '--need <count:expression>',
        "COUNT nodes matching EXPRESSION, e.g. '3:memory >= 48GiB and gpus >= 1'; repeat for more groups",
      ).argParser(collectNeed),
    )
    .addOption(new Option('--for <duration>', 'how long, e.g. 3d, 12h, P3D').argParser(parsePositiveDuration).conflicts('end'))
    .addOption(new Option('--end <time>', 'until when (RFC 3339), instead of --for').argParser(parseTimestamp))
    .addOption(new Option('--start <time>', 'from when (RFC 3339; default now)').argParser(parseTimestamp));
}

/** The request body, checked here so a mistake never reaches the server. Durations go as ISO 8601. */
function requestBody(flags: RequestFlags): Record<string, unknown> {
  if ((flags.node ?? []).length === 0 && (flags.need ?? []).length === 0) {
    throw new UsageError("say what to lease: --need 'COUNT:EXPRESSION' (e.g. --need '3:gpus >= 1') and/or --node <node>");
  }
  if (flags.for === undefined && flags.end === undefined) throw new UsageError('say for how long: --for 3d or --end <time>');
  if (flags.start !== undefined && flags.end !== undefined && Date.parse(flags.end) <= Date.parse(flags.start)) {
    throw new UsageError('--end must be after --start');
  }
  return {
    name: flags.name,
    project: flags.project,
    start: flags.start,
    end: flags.end,
    duration: flags.for === undefined ? undefined : formatDuration(flags.for),
    nodes: flags.node,
    groups: flags.need?.map((need) => ({ count: need.count, where: need.where })),
  };
}

/**
 * A 409 from create or quote (unavailable, lost race, policy) becomes the server's explanation plus, when the
 * scheduler found one, the earliest start that would work, phrased as the flag to retry with.
 */
async function explainRefusal<T>(ctx: CliContext, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 409) throw err;
    const details = err.details as LeaseRefusalDetails;
    const lines = [`${err.message} (${err.code}, HTTP ${err.status})`];
    const earliest = details.earliest_start;
    if (typeof earliest === 'string' && earliest !== '') lines.push(`earliest start: ${earliest} (try --start ${earliest})`);
    if (ctx.json) lines.push(`details: ${JSON.stringify(err.details)}`);
    throw new CommandFailedError(lines.join('\n'));
  }
}

/**
 * A 403 about the lease's project (the server marks it `details.field: "project"`) said in the CLI's words: the
 * operator gives --project; anyone else leaves it out.
 */
async function explainProject<T>(flags: RequestFlags, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 403 || err.details.field !== 'project') throw err;
    const message =
      flags.project === undefined
        ? 'leases belong to a project: as an operator without one, say which project the lease is for with --project NAME|ID'
        : `only an operator (admin) can lease for another project than its own: leave out --project ${flags.project} to lease for your project`;
    throw new ApiError(err.status, err.code, message, err.details);
  }
}

/** One line per allocation whose state (or step, or error) changed, and one for the lease's own state. */
function progressLines(before: Lease, after: Lease): string[] {
  const key = (a: Allocation) => `${a.group}/${a.node_id}`;
  const previous = new Map(before.allocations.map((a) => [key(a), a]));
  const lines: string[] = [];
  for (const a of after.allocations) {
    const was = previous.get(key(a));
    if (was && was.state === a.state && was.step === a.step && was.last_error === a.last_error) continue;
    const from = was && allocationState(was) !== allocationState(a) ? `${allocationState(was)} -> ` : '';
    const error = a.last_error && a.last_error !== was?.last_error ? `: ${a.last_error}` : '';
    lines.push(`${nodeLabel(a)} (group ${groupLabel(a)}): ${from}${allocationState(a)}${error}`);
  }
  if (before.state !== after.state) lines.push(`lease ${after.id}: ${before.state} -> ${after.state}`);
  return lines;
}

/**
 * Polls the lease until it is active (returns) or failed, cancelled, ending or ended, or the time is up (throws,
 * exit 1). Progress goes to stderr. The timeout counts from the lease's start when that is in the future, so
 * `--wait` on a lease starting tomorrow waits for tomorrow and then up to the timeout for the hand-over.
 */
async function waitUntilActive(ctx: CliContext, client: ApiClient, created: Lease, timeoutMs: number): Promise<void> {
  let lease = created;
  const startMs = Date.parse(lease.start);
  const begin = ctx.now().getTime();
  const deadline = Math.max(begin, Number.isFinite(startMs) ? startMs : begin) + timeoutMs;
  const follow = `see \`leasehold lease show ${lease.id}\` and \`leasehold event list --lease ${lease.id}\``;

  if (!WAIT_ENDS.has(lease.state)) {
    if (startMs > begin) ctx.note(`lease ${lease.id} starts at ${lease.start}: waiting for the start time`);
    else ctx.note(`waiting for lease ${lease.id} to become active`);
  }
  while (!WAIT_ENDS.has(lease.state)) {
    const now = ctx.now().getTime();
    if (now >= deadline) {
      if (ctx.json) ctx.out(renderJson(lease));
      throw new CommandFailedError(
        `gave up waiting after ${formatShortDuration(timeoutMs)}: lease ${lease.id} is still ${lease.state} (it carries on; ${follow})`,
      );
    }
    const untilStart = startMs - now;
    const pause = untilStart > POLL_INTERVAL_MS ? Math.min(untilStart, MAX_PAUSE_BEFORE_START_MS) : POLL_INTERVAL_MS;
    await ctx.sleep(Math.min(pause, deadline - now));
    const next = await client.get<Lease>(leasePath(lease.id));
    for (const line of progressLines(lease, next)) ctx.note(line);
    lease = next;
  }

  if (ctx.json) ctx.out(renderJson(lease));
  if (lease.state === 'active') {
    ctx.note(`lease ${lease.id} is active: ${lease.allocations.map(nodeLabel).join(', ')}`);
    return;
  }
  const outcome = { failed: 'failed', cancelled: 'was cancelled', ending: 'is ending', ended: 'has ended' }[
    lease.state as 'failed' | 'cancelled' | 'ending' | 'ended'
  ];
  throw new CommandFailedError(`lease ${lease.id} ${outcome} before it became active; ${follow}`);
}

/** `leasehold lease ...`: ask for nodes by name or by need, for a time; see, extend and cancel leases. */
export function registerLeaseCommands(program: Command, ctx: CliContext): void {
  const lease = program
    .command('lease')
    .summary('lease nodes: by name or by what you need, for a time')
    .description('create, quote, list, show, extend and cancel leases')
    .helpCommand(false);

  autoRenewOptions(requestOptions(lease.command('create').description('lease nodes, all or nothing')))
    .addOption(replaceOption())
    .option('--wait', 'wait until the lease is active (its nodes handed over), printing progress')
    .addOption(
      new Option('--wait-timeout <duration>', 'give up waiting after this long past the start (default 10m)').argParser(
        parsePositiveDuration,
      ),
    )
    .addHelpText(
      'after',
      [
        '',
        'Give what to lease (--need and/or --node) and how long (--for or --end). Each --need is one group:',
        'COUNT nodes matching a requirement expression; the smallest nodes that fit are picked.',
        'When the request cannot be met the server says why per group, and when it could be met later,',
        'the earliest start to retry with.',
        '',
        'Examples:',
        `  ${SEED_EXAMPLE}`,
        '  leasehold lease create --node gpu-01 --node gpu-02 --start 2030-02-01T09:00:00Z --end 2030-02-03T18:00:00Z',
        "  leasehold lease create --need '1:gpus >= 1' --for 12h --wait",
        "  leasehold lease create --project physics-lab --need '2:gpus >= 1' --for 1d   (the operator, for a project)",
      ].join('\n'),
    )
    .action(async (flags: CreateFlags) => {
      const body = { ...requestBody(flags), replace: flags.replace, auto_renew: autoRenewBody(flags) };
      if (flags.waitTimeout !== undefined && !flags.wait) throw new UsageError('--wait-timeout goes with --wait');
      const client = await ctx.client();
      const created = await explainProject(flags, () => explainRefusal(ctx, () => client.post<Lease>('/v1/leases', body)));
      if (!flags.wait) {
        ctx.print(created, () => leaseView(created));
        return;
      }
      // With --json only the final lease is printed: one document on stdout.
      if (!ctx.json) ctx.out(leaseView(created));
      await waitUntilActive(ctx, client, created, flags.waitTimeout ?? DEFAULT_WAIT_MS);
    });

  requestOptions(lease.command('quote').description('show which nodes a lease would get, changing nothing'))
    .addHelpText('after', `\nExample:\n  ${SEED_EXAMPLE.replace('lease create', 'lease quote')}`)
    .action(async (flags: RequestFlags) => {
      const body = requestBody(flags);
      const client = await ctx.client();
      const quote = await explainProject(flags, () => explainRefusal(ctx, () => client.post<Quote>('/v1/leases/quote', body)));
      ctx.print(quote, () => quoteView(quote));
    });

  listOptions(lease.command('list').description('list the leases you can see, newest first'))
    .option('--project <project>', 'only the leases of this project (id or name)')
    .option('--owner <project>', 'only leases on nodes this project owns (id or name): who leases your nodes')
    .addOption(new Option('--state <state>', 'only leases in this state').choices(LEASE_STATES))
    .option('--node <node>', 'only leases on this node (uuid or name)')
    .addOption(new Option('--order <order>', 'newest: most recently created first; start: earliest start first').choices(['newest', 'start']).default('newest'))
    .action(async (flags: ListFlags & { project?: string; owner?: string; state?: string; node?: string; order: string }) => {
      const query = {
        project: await resolveId(ctx, RefKind.Project, flags.project),
        owner: await resolveId(ctx, RefKind.Project, flags.owner),
        state: flags.state,
        node_id: await resolveId(ctx, RefKind.Node, flags.node),
        order: flags.order,
      };
      await printList<Lease>(
        ctx,
        { path: '/v1/leases', key: 'leases', query, all: flags.all, limit: flags.limit, marker: flags.marker },
        (leases) => leaseTable(leases, ctx.now()),
      );
    });

  lease
    .command('show')
    .description('show a lease and its nodes')
    .argument('<lease>', 'lease id, name or id prefix')
    .action(async (ref: string) => {
      const client = await ctx.client();
      const shown = await fetchRef<Lease>(client, RefKind.Lease, ref);
      ctx.print(shown, () => leaseView(shown, ctx.now()));
    });

  lease
    .command('extend')
    .description('move the end of a lease (later, or earlier with --end)')
    .argument('<lease>', 'lease id, name or id prefix')
    .addOption(new Option('--end <time>', 'the new end (RFC 3339)').argParser(parseTimestamp).conflicts('by'))
    .addOption(new Option('--by <duration>', 'add this to the current end, e.g. 1d, 12h').argParser(parsePositiveDuration))
    .addHelpText('after', '\nExamples:\n  leasehold lease extend 5f3c... --by 1d\n  leasehold lease extend 5f3c... --end 2030-02-05T18:00:00Z')
    .action(async (ref: string, flags: { end?: string; by?: number }) => {
      if (flags.end === undefined && flags.by === undefined) throw new UsageError('give the new end: --end <time> or --by <duration>');
      const client = await ctx.client();
      const id = await resolveId(ctx, RefKind.Lease, ref);
      let end = flags.end;
      if (flags.by !== undefined) {
        const current = await client.get<Lease>(leasePath(id));
        const currentEnd = Date.parse(current.end);
        if (Number.isNaN(currentEnd)) {
          throw new ApiError(0, 'bad_response', `the server sent lease ${id} with an end that is not a time: ${JSON.stringify(current.end)}`);
        }
        end = new Date(currentEnd + flags.by).toISOString();
      }
      const updated = await client.patch<Lease>(leasePath(id), { end });
      ctx.print(updated, () => leaseView(updated));
    });

  lease
    .command('cancel')
    .description('cancel a lease that has not started, or end one now (its nodes are released and cleaned)')
    .argument('<lease>', 'lease id, name or id prefix')
    .action(async (ref: string) => {
      const client = await ctx.client();
      const id = await resolveId(ctx, RefKind.Lease, ref);
      const cancelled = await client.request<Lease>('DELETE', leasePath(id));
      ctx.print(cancelled, () => leaseView(cancelled));
      if (!ctx.json && cancelled.state === 'ending') ctx.note(`lease ${id} is ending: its nodes are being released and cleaned`);
    });
}
