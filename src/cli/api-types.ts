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
}

export interface SyncResult {
  readonly added: number;
  readonly updated: number;
  readonly removed: number;
  readonly unchanged: number;
}
