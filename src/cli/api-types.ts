/** The v1 API's JSON shapes as the CLI reads them (the server's OpenAPI document is the authority). */

export interface ProjectRef {
  readonly id: string;
  readonly name: string;
}

export interface Project {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly quota: { readonly max_nodes: number | null; readonly max_lease_duration: string | null };
  readonly created_at: string;
  readonly updated_at: string;
}

export interface User {
  readonly id: string;
  readonly name: string;
  readonly project_id: string | null;
  readonly role: string;
  readonly created_at: string;
}

export interface Me {
  readonly user: User;
  readonly project: ProjectRef | null;
}

export interface Token {
  readonly id: string;
  readonly prefix: string;
  readonly user_id: string;
  readonly description: string | null;
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
}

export interface NewToken extends Token {
  readonly token: string;
}

export interface Node {
  readonly id: string;
  readonly name: string | null;
  readonly resource_class: string | null;
  readonly owner: string | null;
  readonly owner_project: ProjectRef | null;
  readonly lessee: string | null;
  readonly facts: Readonly<Record<string, unknown>>;
  readonly properties: Readonly<Record<string, unknown>>;
  readonly traits: readonly string[];
  readonly power_state: string | null;
  readonly provision_state: string | null;
  readonly target_provision_state: string | null;
  readonly maintenance: boolean;
  readonly maintenance_reason: string | null;
  readonly last_error: string | null;
  readonly console_enabled: boolean;
  readonly synced_at: string;
  /** Cleaning failed at a lease's end: the node takes no lease until its owner or the operator clears it. */
  readonly quarantined: boolean;
  readonly quarantine_reason: string | null;
  /** The lease on the node right now, shown to its owner, the operator and the lessee. */
  readonly lease: NodeLease | null;
}

export interface NodeLease {
  readonly id: string;
  readonly project_id: string;
  readonly end: string;
}

export interface PowerResult {
  readonly node_id: string;
  readonly action: string;
  readonly target_power_state: string | null;
}

export interface BootDeviceResult {
  readonly node_id: string;
  readonly boot_device: string;
  readonly persistent: boolean;
}

export interface SyncResult {
  readonly added: number;
  readonly updated: number;
  readonly removed: number;
  readonly unchanged: number;
}

/** A span of time; `end: null` is open-ended. */
export interface Window {
  readonly start: string;
  readonly end: string | null;
}

export const OFFER_STATUSES = ['scheduled', 'active', 'expired', 'withdrawn'] as const;

/** An owner's policy for leasing one node: when, how long, to whom. */
export interface Offer {
  readonly id: string;
  readonly node_id: string;
  readonly node_name: string | null;
  readonly project_id: string;
  readonly start: string;
  readonly end: string | null;
  /** ISO 8601 durations ("P5D"); null: no limit from the offer. */
  readonly max_lease_duration: string | null;
  readonly min_lease_duration: string | null;
  /** Project ids; null: every project. */
  readonly allowed_projects: readonly string[] | null;
  readonly status: (typeof OFFER_STATUSES)[number];
  readonly free_windows: readonly Window[];
  readonly created_at: string;
  readonly withdrawn_at: string | null;
}

export interface LeaseGroup {
  readonly count: number;
  readonly where: string;
}

export const LEASE_STATES = ['pending', 'active', 'ending', 'ended', 'cancelled', 'failed'] as const;
export type LeaseState = (typeof LEASE_STATES)[number];

export interface Allocation {
  readonly node_id: string;
  readonly node_name: string | null;
  readonly group: number;
  readonly state: string;
  /** Where an ending allocation is in its release steps (e.g. "clean"). */
  readonly step: string | null;
  readonly last_error: string | null;
}

export interface Lease {
  readonly id: string;
  readonly name: string;
  readonly project_id: string;
  readonly state: LeaseState;
  readonly start: string;
  readonly end: string;
  readonly request: { readonly nodes?: readonly string[]; readonly groups?: readonly LeaseGroup[] };
  readonly allocations: readonly Allocation[];
  readonly created_at: string;
  readonly updated_at: string;
}

/** What `POST /v1/leases/quote` answers: the lease that would be made now. */
export interface Quote {
  readonly start: string;
  readonly end: string;
  readonly duration: string;
  readonly allocations: readonly Pick<Allocation, 'node_id' | 'node_name' | 'group'>[];
}

/** `error.details` of a 409 from `POST /v1/leases` or `/v1/leases/quote`. */
export interface LeaseRefusalDetails {
  readonly earliest_start?: string | null;
  readonly groups?: readonly {
    readonly group: number;
    readonly count: number;
    readonly where: string;
    readonly matching: number;
    readonly free: number;
    readonly allowed: number;
    readonly reasons: readonly string[];
  }[];
}

/** One audit-log entry. */
export interface AuditEvent {
  readonly seq: number;
  readonly at: string;
  readonly type: string;
  readonly outcome: 'ok' | 'error';
  readonly actor: string | null;
  readonly node_id: string | null;
  readonly lease_id: string | null;
  readonly offer_id: string | null;
  readonly project_id: string | null;
  readonly message: string;
  readonly details: unknown;
}
