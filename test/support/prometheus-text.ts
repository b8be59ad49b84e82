/**
 * A strict parser of Prometheus's text exposition format (0.0.4), for tests: any line that is not a well-formed
 * HELP, TYPE or sample throws, as does a sample of an undeclared family, a sample name a family's type does not
 * allow, or the same series twice. Small on purpose: the npm parsers of this format are unmaintained.
 */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  readonly help: string;
  readonly samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('the exposition must end with a newline');
  lines.forEach((line, i) => {
    const fail = (why: string): never => {
      throw new Error(`line ${i + 1}: ${why}: ${JSON.stringify(line)}`);
    };
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) {
        if (/^# (HELP|TYPE)\b/.test(line)) fail('malformed HELP or TYPE');
        return; // any other comment
      }
      const [, keyword, name, rest] = m as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) fail('bad metric name');
      const family = families.get(name) ?? { name, type: 'untyped' as Family['type'], help: '', samples: [] };
      if (keyword === 'TYPE') {
        if (!TYPES.has(rest)) fail('unknown type');
        if (family.samples.length > 0) fail('TYPE after samples');
        families.set(name, { ...family, type: rest as Family['type'] });
      } else families.set(name, { ...family, help: rest });
      return;
    }
    const sample = parseSample(line, fail);
    const family = familyOf(families, sample.name);
    if (!family) fail('sample of an undeclared family');
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(key)) fail('the same series twice');
    seen.add(key);
    family!.samples.push(sample);
  });
  return families;
}

/** The family a sample belongs to: its own name, or a histogram's or summary's with its suffix. */
function familyOf(families: Map<string, Family>, name: string): Family | undefined {
  const own = families.get(name);
  if (own) return own;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  const base = m ? families.get(m[1]!) : undefined;
  if (!base) return undefined;
  if (base.type === 'histogram' || (base.type === 'summary' && m![2] !== 'bucket')) return base;
  return undefined;
}

function parseSample(line: string, fail: (why: string) => never): Sample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)( -?\d+)?$/.exec(line);
  if (!m) fail('malformed sample');
  const labels = m![2] ? parseLabels(m![2].slice(1, -1), fail) : {};
  return { name: m![1]!, labels, value: parseValue(m![3]!, fail) };
}

function parseLabels(body: string, fail: (why: string) => never): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < body.length) {
    const eq = body.indexOf('=', i);
    if (eq < 0) fail('label without a value');
    const name = body.slice(i, eq);
    if (!LABEL_NAME.test(name)) fail(`bad label name ${JSON.stringify(name)}`);
    if (name in labels) fail(`label ${name} twice`);
    if (body[eq + 1] !== '"') fail('label value not quoted');
    let value = '';
    let j = eq + 2;
    for (;;) {
      if (j >= body.length) fail('unterminated label value');
      const ch = body[j]!;
      if (ch === '"') break;
      if (ch === '\\') {
        const next = body[j + 1];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else fail('bad escape in a label value');
        j += 2;
      } else {
        value += ch;
        j++;
      }
    }
    labels[name] = value;
    i = j + 1;
    if (i < body.length) {
      if (body[i] !== ',') fail('labels not separated by commas');
      i++;
    }
  }
  return labels;
}

function parseValue(text: string, fail: (why: string) => never): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) fail('bad value');
  return Number(text);
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = familyOf(families, name);
  const matching = (family?.samples ?? []).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (matching.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${matching.length} series`);
  return matching[0]?.value;
}
