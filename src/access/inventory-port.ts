import type { InventoryNode } from '../domain/inventory.js';
import type { SyncResult } from '../store/store.js';

/**
 * What the entry points ask of the inventory (engine/inventory-sync.ts implements it): a full sync on the
 * operator's request, one node re-read after a change, and a node followed through a transition it started.
 */
export interface InventoryPort {
  syncAll(): Promise<SyncResult>;
  refreshNode(id: string): Promise<InventoryNode>;
  /** Re-reads the node until its transition is over (fire and forget). */
  followNode(id: string): void;
}
