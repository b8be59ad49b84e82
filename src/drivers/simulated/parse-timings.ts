import { InvalidRequestError } from '../../domain/errors.js';
import { DEFAULT_TIMINGS } from './simulated-types.js';
import type { SimulatedTimings } from './simulated-types.js';

/**
 * Reads `LEASEHOLD_SIMULATED_TIMINGS`: a JSON object of operation durations in milliseconds
 * (`{"powerMs": 500, "cleanMs": 5000}`), optionally with `speed`, a factor that divides every default not given
 * explicitly (`{"speed": 10}` runs the demo ten times faster).
 */
export function parseTimings(json: string, source = 'LEASEHOLD_SIMULATED_TIMINGS'): Partial<SimulatedTimings> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw new InvalidRequestError(`${source}: not valid JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidRequestError(`${source}: expected a JSON object such as {"powerMs": 2000, "cleanMs": 20000}`);
  }
  const known = Object.keys(DEFAULT_TIMINGS) as (keyof SimulatedTimings)[];
  const result: Partial<Record<keyof SimulatedTimings, number>> = {};
  let speed = 1;
  for (const [key, raw] of Object.entries(value)) {
    const valid = typeof raw === 'number' && Number.isFinite(raw) && raw >= 0;
    if (key === 'speed') {
      if (!valid || raw <= 0) throw new InvalidRequestError(`${source}.speed: expected a positive number`);
      speed = raw;
    } else if ((known as string[]).includes(key)) {
      if (!valid) throw new InvalidRequestError(`${source}.${key}: expected a non-negative number of milliseconds`);
      result[key as keyof SimulatedTimings] = raw;
    } else {
      throw new InvalidRequestError(`${source}.${key}: unknown timing (known: speed, ${known.join(', ')})`);
    }
  }
  if (speed !== 1) {
    for (const key of known) result[key] ??= Math.round(DEFAULT_TIMINGS[key] / speed);
  }
  return result;
}
