import { afterEach } from 'vitest';
import type { NodeRecord, Store } from '../../../src/store/store.js';

export type OpenFreshStore = () => Promise<Store>;

/** Stores opened during a test, closed after it: every test starts from an empty database. */
export function useFreshStores(open: OpenFreshStore): () => Promise<Store> {
  let opened: Store[] = [];
  afterEach(async () => {
    const stores = opened;
    opened = [];
    await Promise.all(stores.map((store) => store.close()));
  });
  return async () => {
    const store = await open();
    opened.push(store);
    return store;
  };
}

export const T0 = new Date('2030-01-01T00:00:00.000Z');

/** `T0` plus `ms` milliseconds. */
export function at(ms: number): Date {
  return new Date(T0.getTime() + ms);
}

export const HOUR = 3_600_000;

export function nodeRecord(id: string, overrides: Partial<NodeRecord> = {}): NodeRecord {
  return {
    id,
    name: `node-${id}`,
    resource_class: 'baremetal.gpu',
    owner: null,
    lessee: null,
    properties: { memory_mb: 65536, cpus: 32, local_gb: 480, cpu_arch: 'x86_64', capabilities: 'boot_mode:uefi' },
    traits: ['CUSTOM_GPU', 'CUSTOM_NVME'],
    facts: { memory: 68_719_476_736, cpus: 32, disk: 515_396_075_520, cpu_arch: 'x86_64', boot_mode: 'uefi' },
    power_state: 'power off',
    provision_state: 'available',
    target_provision_state: null,
    maintenance: false,
    maintenance_reason: null,
    last_error: null,
    console_enabled: false,
    extra: { rack: 'r1' },
    driver_updated_at: new Date('2029-12-31T23:00:00.123Z'),
    ...overrides,
  };
}

/** Walks every page of a keyset-paginated list, returning the pages. */
export async function allPages<T>(
  fetch: (marker: string | null) => Promise<{ items: readonly T[]; nextMarker: string | null }>,
): Promise<(readonly T[])[]> {
  const pages: (readonly T[])[] = [];
  let marker: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const page: { items: readonly T[]; nextMarker: string | null } = await fetch(marker);
    pages.push(page.items);
    if (page.nextMarker === null) return pages;
    marker = page.nextMarker;
  }
  throw new Error('pagination did not end');
}
