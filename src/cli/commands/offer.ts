import { InvalidArgumentError, Option, type Command } from 'commander';
import { OFFER_STATUSES, type Offer, type OfferBatch } from '../api-types.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { formatEnd, formatLimit, formatWindow } from '../format.js';
import { fetchRef, RefKind, resolveId } from '../resolve-ref.js';
import { renderFields, type Cell } from '../output.js';
import { printList } from '../paging.js';
import { collect, parseIsoDuration, parseTimestamp } from '../parsers.js';
import { parseDuration } from '../../domain/duration.js';
import { listOptions, type ListFlags } from './list-options.js';
import { collectWeekly, explainBulkRefusal, isBatch, offerTargets, parseTimezone } from './offer-batch.js';
import { allowedProjects, offerTable } from './offer-table.js';

/** `--price 2.50`: a decimal with at most 4 places, sent as written (a string: no binary rounding). */
function parsePrice(text: string): string {
  if (!/^\d{1,10}(\.\d{1,4})?$/.test(text.trim())) throw new InvalidArgumentError('a price is a decimal number with at most 4 decimals, e.g. 2.50');
  return text.trim();
}

/** `--currency eur` → EUR (ISO 4217 codes are three letters). */
function parseCurrency(text: string): string {
  const code = text.trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(code)) throw new InvalidArgumentError('a currency is an ISO 4217 code of three letters, e.g. EUR');
  return code;
}

const offerPath = (id: string) => `/v1/offers/${encodeURIComponent(id)}`;

function offerFields(o: Offer, now: Date): string {
  return renderFields([
    ['id', o.id],
    ['node', o.node_name ? `${o.node_name} (${o.node_id})` : o.node_id],
    ['owner', o.project_name ? `${o.project_name} (${o.project_id})` : o.project_id],
    // A sub-offer: `owner` is the lessee offering the node on, inside this lease of its own.
    ...(o.sublease_of ? [['sublease of', o.sublease_of] as [string, Cell]] : []),
    ['status', o.status],
    ['start', o.start],
    ['end', formatEnd(o.end)],
    // Weekly windows only when the offer has them: the view of other offers stays as it was.
    ...(o.weekly_summary ? [['weekly', `${o.weekly_summary}\n${(o.weekly ?? []).join('; ')}`] as [string, Cell]] : []),
    ['max lease', formatLimit(o.max_lease_duration)],
    ['min lease', o.min_lease_duration ?? 'none'],
    ['allowed projects', allowedProjects(o)],
    ['reclaim notice', o.reclaim_notice ?? 'none (never before a lease ends)'],
    ['price', o.price_per_node_hour === null || o.price_per_node_hour === undefined ? 'none' : `${o.price_per_node_hour} ${o.currency} per node-hour`],
    // The extension policy only when the offer has one: most offers have none, and their view stays as it was.
    ...extensionFields(o),
    ['free', o.free_windows.length === 0 ? 'none' : o.free_windows.map((w) => formatWindow(w, now)).join('\n')],
    ['created at', o.created_at],
    ['withdrawn at', o.withdrawn_at],
  ]);
}

function extensionFields(o: Offer): (readonly [string, string])[] {
  if (!o.extension_window && !o.extension_max_ahead && !o.max_total_length) return [];
  return [
    ['extension window', o.extension_window ? `within ${o.extension_window} of the end` : 'any time'],
    ['extends at most', o.extension_max_ahead ? `${o.extension_max_ahead} ahead of now` : 'no limit'],
    ['max total length', o.max_total_length ?? 'the max lease'],
  ];
}

/**
 * The nodes to offer with a short id prefix turned into the node's id, as the node table prints it; names and full
 * ids go as they are (the server takes them). One after another: a thousand prefixes are not a thousand requests at once.
 */
async function resolveTargets(ctx: CliContext, targets: ReturnType<typeof offerTargets>): Promise<ReturnType<typeof offerTargets>> {
  if ('where' in targets) return targets;
  if ('node_id' in targets) return { node_id: await resolveId(ctx, RefKind.Node, targets.node_id) };
  const nodes: string[] = [];
  for (const node of targets.nodes) nodes.push(await resolveId(ctx, RefKind.Node, node));
  return { nodes };
}

type OfferCreateFlags = {
  start?: string;
  end?: string;
  maxLease?: string;
  minLease?: string;
  allow?: string[];
  reclaimNotice?: string;
  price?: string;
  currency?: string;
  extensionWindow?: string;
  extensionMaxAhead?: string;
  maxTotalLength?: string;
  where?: string;
  weekly?: string[];
  timezone?: string;
};

type OfferListFlags = ListFlags & {
  wide?: boolean;
  node?: string;
  owner?: string;
  status?: string;
  where?: string;
  freeFrom?: string;
  freeTo?: string;
};

/** `leasehold offer ...`: an owner puts a node in the pool, for a time, for a maximum lease length, to some projects. */
export function registerOfferCommands(program: Command, ctx: CliContext): void {
  const offer = program
    .command('offer')
    .summary("offer your nodes for lease (owner policy)")
    .description('offer nodes for lease: when, for how long a lease, to which projects; list, show and withdraw offers')
    .helpCommand(false);

  offer
    .command('create')
    .description('offer nodes you own for lease (owner): one, several, or those matching --where; all or none')
    .argument('[nodes...]', 'node uuids, names or id prefixes')
    .option('--where <expression>', 'offer every node of yours matching this, e.g. "gpus >= 1" (at most 1000)')
    .addOption(new Option('--weekly <rule>', 'available only in these weekly windows: DAYS [HH:MM-HH:MM], e.g. "mon-fri 18:00-08:00", "sat-sun"; repeat for more').argParser(collectWeekly))
    .addOption(new Option('--timezone <iana>', 'timezone of --weekly, e.g. Europe/Berlin (default UTC)').argParser(parseTimezone))
    .addOption(new Option('--start <time>', 'from when (RFC 3339; default now)').argParser(parseTimestamp))
    .addOption(new Option('--end <time>', 'until when (RFC 3339; default open-ended)').argParser(parseTimestamp))
    .addOption(new Option('--max-lease <duration>', 'longest lease allowed, e.g. 5d, 12h, P5D').argParser(parseIsoDuration))
    .addOption(new Option('--min-lease <duration>', 'shortest lease allowed, e.g. 1h').argParser(parseIsoDuration))
    .addOption(
      new Option('--allow <project>', 'only this project may lease it (id or name); repeat for more; default any project')
        .argParser(collect),
    )
    .addOption(
      new Option('--reclaim-notice <duration>', 'you may take the node back from a lease with this much notice (`node reclaim`), e.g. 1d').argParser(parseIsoDuration),
    )
    .addOption(new Option('--price <amount>', 'price per node-hour, e.g. 2.50 (needs --currency); usage reports charges from it').argParser(parsePrice))
    .addOption(new Option('--currency <code>', 'ISO 4217 code of --price, e.g. EUR').argParser(parseCurrency))
    // The extension policy (issue 16): how a lessee may extend a lease by itself.
    .addOption(new Option('--extension-window <duration>', 'lessees may extend only within this long of the end, e.g. 2d').argParser(parseIsoDuration))
    .addOption(new Option('--extension-max-ahead <duration>', 'an extension reaches at most this far from now, e.g. 7d').argParser(parseIsoDuration))
    .addOption(new Option('--max-total-length <duration>', 'a lease never longer than this in total, extensions included, e.g. 14d').argParser(parseIsoDuration))
    .addHelpText(
      'after',
      '\nExamples:\n  leasehold offer create gpu-01 --max-lease 5d --price 2.50 --currency EUR\n  leasehold offer create --where \'gpus >= 1\' --weekly \'mon-fri 18:00-08:00\' --weekly sat-sun --timezone Europe/Berlin\n  leasehold offer create gpu-01 gpu-02 gpu-03 --max-lease 2d   (all three or none)\n  leasehold offer create gpu-04 --max-lease 7d --extension-window 2d --extension-max-ahead 7d --max-total-length 14d\n  leasehold offer create gpu-03 --reclaim-notice 1d\n  leasehold offer create gpu-02 --start 2030-02-01T00:00:00Z --end 2030-03-01T00:00:00Z --allow physics-lab --allow chem-lab' +
        '\n  leasehold offer create gpu-04 --allow geo --end 2030-01-03T00:00:00Z   (a lessee sub-leasing a node it holds, within its lease)',
    )
    .addHelpText(
      'after',
      '\nWeekly rules: the day a window starts, local times in --timezone; an end at or before the start runs into the next day\n' +
        '("mon-fri 18:00-08:00" covers Friday night to Saturday 08:00); no times: whole days. A lease must fit inside one window.',
    )
    .action(async (nodes: string[], flags: OfferCreateFlags) => {
      const targets = offerTargets(nodes, flags.where);
      if (flags.timezone !== undefined && flags.weekly === undefined) throw new UsageError('--timezone goes with --weekly');
      if (flags.start !== undefined && flags.end !== undefined && Date.parse(flags.end) <= Date.parse(flags.start)) {
        throw new UsageError('--end must be after --start');
      }
      if (
        flags.maxLease !== undefined &&
        flags.minLease !== undefined &&
        parseDuration(flags.minLease) > parseDuration(flags.maxLease)
      ) {
        throw new UsageError('--min-lease must not be longer than --max-lease');
      }
      if ((flags.price === undefined) !== (flags.currency === undefined)) throw new UsageError('--price and --currency go together');
      const client = await ctx.client();
      const resolved = await resolveTargets(ctx, targets);
      const created = await explainBulkRefusal(ctx, () => client.post<Offer | OfferBatch>('/v1/offers', {
        ...resolved,
        start: flags.start,
        end: flags.end,
        max_lease_duration: flags.maxLease,
        min_lease_duration: flags.minLease,
        allowed_projects: flags.allow,
        reclaim_notice: flags.reclaimNotice,
        price_per_node_hour: flags.price,
        currency: flags.currency,
        extension_window: flags.extensionWindow,
        extension_max_ahead: flags.extensionMaxAhead,
        max_total_length: flags.maxTotalLength,
        weekly: flags.weekly,
        timezone: flags.timezone,
      }));
      if (ctx.json) return ctx.print(created, () => '');
      if (isBatch(created)) {
        // As `offer list --wide`: the full ids, to show or withdraw the new offers.
        ctx.out(`Offered ${created.offers.length} node${created.offers.length === 1 ? '' : 's'}:\n${offerTable(created.offers, ctx.now(), true)}`);
        return;
      }
      ctx.out(offerFields(created, ctx.now()));
    });

  listOptions(offer.command('list').description('list the offers you can see'))
    .option('--node <node>', 'only offers of this node (uuid, name or id prefix)')
    .option('--owner <project>', 'only offers of nodes this project owns (id, name or id prefix)')
    .addOption(new Option('--status <status>', 'only offers in this status').choices(OFFER_STATUSES))
    .option('--where <expression>', 'only offers of nodes matching this, e.g. "memory >= 48GiB and gpus >= 1"')
    .addOption(new Option('--free-from <time>', 'only offers free from this time (RFC 3339)').argParser(parseTimestamp))
    .addOption(new Option('--free-to <time>', '... until this time (RFC 3339)').argParser(parseTimestamp))
    .option('--wide', 'every column: the full id, architecture, the offer\'s start and end, who may lease, full times')
    .addHelpText('after', '\nFREE is the first free window of the offer; END "open" means no end. `offer show` and `offer delete` take the full id (--wide or --json).')
    .action(async (flags: OfferListFlags) => {
      if (flags.freeFrom !== undefined && flags.freeTo !== undefined && Date.parse(flags.freeTo) <= Date.parse(flags.freeFrom)) {
        throw new UsageError('--free-to must be after --free-from');
      }
      const query = {
        node_id: await resolveId(ctx, RefKind.Node, flags.node),
        owner: await resolveId(ctx, RefKind.Project, flags.owner),
        status: flags.status,
        where: flags.where,
        free_from: flags.freeFrom,
        free_to: flags.freeTo,
      };
      await printList<Offer>(
        ctx,
        { path: '/v1/offers', key: 'offers', query, all: flags.all, limit: flags.limit, marker: flags.marker },
        (offers) => offerTable(offers, ctx.now(), flags.wide === true),
      );
    });

  offer
    .command('show')
    .description('show an offer and its free windows')
    .argument('<offer>', 'offer id or id prefix')
    .action(async (ref: string) => {
      const client = await ctx.client();
      const shown = await fetchRef<Offer>(client, RefKind.Offer, ref);
      if (ctx.json) return ctx.print(shown, () => '');
      ctx.out(offerFields(shown, ctx.now()));
    });

  offer
    .command('delete')
    .description('withdraw an offer: no new leases from it; leases already made stay')
    .argument('<offer>', 'offer id or id prefix')
    .action(async (ref: string) => {
      const client = await ctx.client();
      const id = await resolveId(ctx, RefKind.Offer, ref);
      await client.delete(offerPath(id));
      if (!ctx.json) ctx.out(`Withdrew offer ${id} (leases already made from it stay)`);
    });
}
