import { InvalidArgumentError } from 'commander';
import type { Offer, OfferBatch } from '../api-types.js';
import type { CliContext } from '../context.js';
import { ApiError, CommandFailedError, UsageError } from '../errors.js';
import { renderTable } from '../output.js';
import { checkTimezone, formatWeeklyRule, parseWeeklyRule } from '../../domain/scheduling/weekly-windows.js';

/**
 * The parts of `leasehold offer create` for many nodes and weekly windows: which nodes (names or `--where`),
 * the weekly rules checked before anything is sent, and a bulk refusal shown per node.
 */

/** `--weekly 'mon-fri 18:00-08:00'` (repeatable): checked here, sent canonical; exit 2 when it is not a rule. */
export function collectWeekly(value: string, previous: string[] | undefined): string[] {
  try {
    return [...(previous ?? []), formatWeeklyRule(parseWeeklyRule(value, '--weekly'))];
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message.replace(/^--weekly: /, ''));
  }
}

/** `--timezone Europe/Berlin`: an IANA name this machine knows too. */
export function parseTimezone(value: string): string {
  try {
    return checkTimezone(value.trim(), '--timezone');
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message.replace(/^--timezone: /, ''));
  }
}

/** What the request names: one node (`node_id`, answered with the offer), several (`nodes`), or `where`. */
export function offerTargets(nodes: readonly string[], where: string | undefined): { node_id: string } | { nodes: string[] } | { where: string } {
  if (where !== undefined && nodes.length > 0) throw new UsageError('give node names or --where, not both');
  if (where !== undefined) return { where };
  if (nodes.length === 0) throw new UsageError('name the nodes to offer, or select them with --where EXPR');
  return nodes.length === 1 ? { node_id: nodes[0]! } : { nodes: [...nodes] };
}

export function isBatch(created: Offer | OfferBatch): created is OfferBatch {
  return 'offers' in created;
}

interface NodeProblem {
  readonly node: string;
  readonly node_name: string | null;
  readonly code: string;
  readonly message: string;
}

/**
 * A bulk offer refused (nothing was offered): the server's sentence and one line per node that could not be
 * offered. Under --json the API's error body is printed as it came (details.nodes included).
 */
export async function explainBulkRefusal<T>(ctx: CliContext, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    const problems = err instanceof ApiError ? err.details['nodes'] : undefined;
    if (ctx.json || !(err instanceof ApiError) || !Array.isArray(problems)) throw err;
    const rows = (problems as NodeProblem[]).map((p) => [p.node_name ?? p.node, p.code, p.message]);
    throw new CommandFailedError(`${err.message} (${err.code}, HTTP ${err.status})\n${renderTable(['NODE', 'CODE', 'WHY'], rows).trimEnd()}`);
  }
}
