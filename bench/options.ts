/** Command-line options of `npm run bench` (argv after `--`, or environment variables). */

export type EngineName = 'pglite' | 'postgres';

/**
 * Section 4's variants: how the real Ironic authenticates (and so the direct calls and Leasehold's Ironic client);
 * under `keystone` Leasehold's own identity is Keystone too.
 */
export type GatewayAuth = 'noauth' | 'http_basic' | 'keystone';
export const GATEWAY_AUTHS: readonly GatewayAuth[] = ['noauth', 'http_basic', 'keystone'];
/** What runs without `--ironic-auth`: the strictest ratio and a deployment as in an OpenStack cloud. */
export const DEFAULT_GATEWAY_AUTHS: readonly GatewayAuth[] = ['noauth', 'keystone'];

export interface Sizes {
  /** Nodes in the inventory of section 1 and 2. */
  readonly nodes: number;
  /** Existing leases seeded before measuring (one node each). */
  readonly leases: number;
  /** Quotes and creates of the seed request measured per engine. */
  readonly quotes: number;
  readonly creates: number;
  /** Each kind of request (quotes, creates) stops early after this many seconds (at least 20 samples). */
  readonly timeBoxS: number;
  /** Section 2: concurrent clients and the rounds they race in (one window per round). */
  readonly clients: number;
  readonly rounds: number;
  /** No new round starts after this many seconds (at least one round runs). */
  readonly raceBoxS: number;
  /** The race's own pool: nodes (of which `raceNodes` are raced for), with ten seeded leases per node. */
  readonly racePoolNodes: number;
  /** Nodes the race is fought over. */
  readonly raceNodes: number;
  /** Section 3: leases (one node each) ending at one instant, and how many of them poll for the access cut. */
  readonly ends: number;
  readonly accessSample: number;
  /** Section 4: measured requests per kind (direct, gateway) and per call (GET, power PUT), after the warm-up. */
  readonly gatewaySamples: number;
  readonly gatewayWarmup: number;
  /** Section 4 under Keystone: GETs per kind with a token the side has never seen (its first call with it). */
  readonly gatewayCold: number;
  /** Section 4's throughput part: concurrent clients, and the GETs each burst (one per kind and round) sends. */
  readonly gatewayClients: number;
  readonly gatewayRounds: number;
  readonly gatewayBurst: number;
  /** Section 4's engine part: nodes of the large hand-over and hand-back, and 4-node leases started alone. */
  readonly engineBurst: number;
  readonly engineProbes: number;
  /** Section 5: inventory sizes whose quotes and lists are timed (two leases per node), and quotes per size. */
  readonly growth: readonly number[];
  readonly growthQuotes: number;
  /** Section 7: attaches per kind (through Leasehold, directly), and lease ends with a network attached. */
  readonly networkAttaches: number;
  readonly networkEnds: number;
}

export interface BenchOptions {
  readonly quick: boolean;
  /** Engines asked for: `both` is narrowed to what answers (see run.ts). */
  readonly engine: EngineName | 'both' | 'auto';
  /** A server where the user may CREATE DATABASE; the bench never touches that database itself. */
  readonly adminUrl: string;
  /** Where to write the results as JSON, or null. */
  readonly jsonPath: string | null;
  /** Only these sections (1, 2, 3, 4, 5); all by default. */
  readonly sections: ReadonlySet<number>;
  /** Section 4's variants, run one after the other in this order; DEFAULT_GATEWAY_AUTHS by default. */
  readonly gatewayAuth: readonly GatewayAuth[];
  /** Section 4 without its lease-engine part (4b, minutes long): the gateway's latency alone (`--gateway-only`). */
  readonly gatewayOnly: boolean;
  readonly sizes: Sizes;
}

export const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

const FULL: Sizes = {
  nodes: 10_000,
  leases: 100_000,
  quotes: 200,
  creates: 200,
  timeBoxS: 40,
  clients: 64,
  rounds: 4,
  raceBoxS: 45,
  racePoolNodes: 1_000,
  raceNodes: 16,
  ends: 1_000,
  accessSample: 20,
  gatewaySamples: 300,
  gatewayWarmup: 20,
  gatewayCold: 30,
  gatewayClients: 8,
  gatewayRounds: 5,
  gatewayBurst: 400,
  engineBurst: 200,
  engineProbes: 6,
  growth: [1_000, 10_000, 50_000],
  growthQuotes: 30,
  networkAttaches: 10,
  networkEnds: 3,
};

const QUICK: Sizes = {
  nodes: 1_000,
  leases: 10_000,
  quotes: 40,
  creates: 40,
  timeBoxS: 4,
  clients: 64,
  rounds: 1,
  raceBoxS: 5,
  racePoolNodes: 100,
  raceNodes: 16,
  ends: 100,
  accessSample: 10,
  gatewaySamples: 60,
  gatewayWarmup: 20,
  gatewayCold: 10,
  gatewayClients: 8,
  gatewayRounds: 2,
  gatewayBurst: 200,
  networkAttaches: 3,
  networkEnds: 1,
  engineBurst: 40,
  engineProbes: 5,
  growth: [200, 1_000, 5_000],
  growthQuotes: 10,
};

export const SECTIONS = [1, 2, 3, 4, 5, 6, 7] as const;

export const USAGE = `usage: npm run bench -- [--quick] [--engine pglite|postgres|both] [--json[=path]] [--only 1,2,3,4,5,6,7]
                      [--growth 1000,10000]
                      [--ironic-auth noauth|http_basic|keystone|all|a list such as keystone,noauth] [--gateway-only]

  --quick        small sizes for a smoke run (1,000 nodes, 10,000 leases, 100 lease ends, 60 gateway samples)
  --engine       pglite, postgres or both (default: both when PostgreSQL answers, else pglite)
  --json[=path]  also write the results as JSON (default path: bench-results.json)
  --only         run only these sections (1 quote/create, 2 race, 3 lease ends, 4 gateway and engine against a
                 real Ironic, 5 growth: quotes and lists at 1,000 / 10,000 / 50,000 nodes, 6 process start and memory,
                 7 tenant networks against a real Neutron: skipped when its OpenStack services are not installed)
  --growth       section 5's inventory sizes instead of the default ones (e.g. 10000 alone: one size is
                 ≈ a minute of seeding instead of the several of 50,000)
  --ironic-auth  section 4's Ironic: noauth, http_basic, keystone (Keystone in front of Ironic and as Leasehold's
                 identity), all three, or a list run one after the other in the order given (default:
                 noauth,keystone; a variant whose OpenStack services are not installed is skipped and says so)
  --gateway-only section 4 without its lease-engine part (4b): the gateway's latency alone

environment: LEASEHOLD_BENCH_DATABASE_URL (default ${DEFAULT_ADMIN_URL}),
             LEASEHOLD_BENCH_QUICK=1, LEASEHOLD_BENCH_ENGINE, LEASEHOLD_BENCH_JSON, LEASEHOLD_BENCH_IRONIC_AUTH,
             LEASEHOLD_BENCH_GROWTH`;

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  let quick = env.LEASEHOLD_BENCH_QUICK === '1' || env.LEASEHOLD_BENCH_QUICK === 'true';
  let engine: BenchOptions['engine'] = parseEngine(env.LEASEHOLD_BENCH_ENGINE || 'auto');
  let jsonPath: string | null = env.LEASEHOLD_BENCH_JSON || null;
  let sections = new Set<number>(SECTIONS);
  let gatewayOnly = false;
  let gatewayAuth = env.LEASEHOLD_BENCH_IRONIC_AUTH ? parseGatewayAuth(env.LEASEHOLD_BENCH_IRONIC_AUTH) : DEFAULT_GATEWAY_AUTHS;
  let growth: readonly number[] | null = env.LEASEHOLD_BENCH_GROWTH ? parseGrowth(env.LEASEHOLD_BENCH_GROWTH) : null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
      return v;
    };
    switch (flag) {
      case '--quick':
        quick = true;
        break;
      case '--engine':
        engine = parseEngine(value());
        break;
      case '--json':
        jsonPath = inline ?? 'bench-results.json';
        break;
      case '--only':
        sections = new Set(value().split(',').map((s) => Number(s.trim())));
        if ([...sections].some((s) => !(SECTIONS as readonly number[]).includes(s))) throw new Error(`--only: expected sections among ${SECTIONS.join(',')}\n${USAGE}`);
        break;
      case '--growth':
        growth = parseGrowth(value());
        break;
      case '--ironic-auth':
        gatewayAuth = parseGatewayAuth(value());
        break;
      case '--gateway-only':
        gatewayOnly = true;
        break;
      case '--help':
      case '-h':
        throw new UsageRequested();
      default:
        throw new Error(`unknown option ${arg}\n${USAGE}`);
    }
  }
  return {
    quick,
    engine,
    adminUrl: env.LEASEHOLD_BENCH_DATABASE_URL || DEFAULT_ADMIN_URL,
    jsonPath,
    sections,
    gatewayAuth,
    gatewayOnly,
    sizes: growth ? { ...(quick ? QUICK : FULL), growth } : quick ? QUICK : FULL,
  };
}

export class UsageRequested extends Error {
  constructor() {
    super(USAGE);
  }
}

function parseGrowth(value: string): readonly number[] {
  const sizes = value.split(',').map((s) => Number(s.trim().replace(/_/g, '')));
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--growth: expected node counts such as 1000,10000\n${USAGE}`);
  return sizes;
}

function parseEngine(value: string): BenchOptions['engine'] {
  if (value === 'pglite' || value === 'postgres' || value === 'both' || value === 'auto') return value;
  throw new Error(`--engine: expected pglite, postgres or both, not ${JSON.stringify(value)}\n${USAGE}`);
}

function parseGatewayAuth(value: string): readonly GatewayAuth[] {
  if (value === 'all') return GATEWAY_AUTHS;
  if (value === 'both') throw new Error(`--ironic-auth both: there are three variants now: say all, or list them (e.g. noauth,http_basic)\n${USAGE}`);
  const list = value.split(',').map((a) => a.trim());
  if (list.length > 0 && new Set(list).size === list.length && list.every((a) => (GATEWAY_AUTHS as readonly string[]).includes(a))) return list as GatewayAuth[];
  throw new Error(`--ironic-auth: expected noauth, http_basic, keystone, all or a list of them, not ${JSON.stringify(value)}\n${USAGE}`);
}
