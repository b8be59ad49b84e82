/**
 * Keys of the transaction-scoped advisory locks (`pg_advisory_xact_lock`) that serialise one-at-a-time work
 * across replicas sharing a database. One registry so that two features never pick the same key by accident.
 * The high bits spell "LHLD"; values stay below 2^53 so they travel as plain numbers.
 */
export const AdvisoryLock = {
  Migrate: 0x4c484c44_0001,
  BootstrapAdmin: 0x4c484c44_0002,
  SyncNodes: 0x4c484c44_0003,
} as const;
