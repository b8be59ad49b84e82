import { useState, type FormEvent } from 'react';
import type { Api } from '../api/client';
import { errorText, unwrap } from '../api/errors';
import { useResource } from '../api/use-resource';
import { useAction } from '../lib/use-action';

/** Ironic's boot devices as the API accepts them (src/drivers/hardware-driver.ts BootDevice), with what each means. */
export const BOOT_DEVICES = [
  { value: 'pxe', label: 'PXE (network)' },
  { value: 'disk', label: 'Disk' },
  { value: 'cdrom', label: 'CD-ROM' },
  { value: 'bios', label: 'BIOS setup' },
  { value: 'safe', label: 'Safe mode' },
] as const;

export type BootDeviceValue = (typeof BOOT_DEVICES)[number]['value'];

interface Current {
  boot_device: string | null;
  persistent: boolean;
}

/** "Disk, every boot" / "PXE (network), next boot only" / "not reported by the BMC". */
export function describeBootDevice(current: Current): string {
  if (current.boot_device === null) return 'not reported by the BMC';
  const label = BOOT_DEVICES.find((d) => d.value === current.boot_device)?.label ?? current.boot_device;
  return `${label}, ${current.persistent ? 'every boot' : 'next boot only'}`;
}

/**
 * A leased node's boot device, read from the BMC through the API and set by the lessee while its lease is active
 * (Ironic's `management` boot device; the policy rule baremetal:node:set_boot_device decides). Errors, of the read
 * or of a change, are shown here, next to the node they are about.
 */
export function BootDevice({ api, nodeId, nodeName }: { api: Api; nodeId: string; nodeName: string }) {
  const current = useResource(
    async (signal) => unwrap(await api.GET('/v1/nodes/{id}/boot-device', { params: { path: { id: nodeId } }, signal })),
    [nodeId],
  );
  const [device, setDevice] = useState<BootDeviceValue>('pxe');
  const [persistent, setPersistent] = useState(false);
  const action = useAction();
  const id = `boot-${nodeId}`;

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    await action.run(async () => {
      const set = unwrap(await api.POST('/v1/nodes/{id}/boot-device', { params: { path: { id: nodeId } }, body: { device, persistent } }));
      current.reload();
      return `${nodeName} boots from ${describeBootDevice(set)}.`;
    });
  }

  return (
    <form className="boot-device stack" onSubmit={onSubmit} aria-label={`Boot device of ${nodeName}`}>
      <p className="small">
        Boot device:{' '}
        {current.loading ? (
          <span className="muted" aria-busy="true">reading…</span>
        ) : current.data ? (
          <strong>{describeBootDevice(current.data)}</strong>
        ) : (
          <span className="error">could not be read: {errorText(current.error)}</span>
        )}
      </p>
      <div className="row">
        <select id={`${id}-device`} aria-label={`New boot device of ${nodeName}`} value={device} onChange={(e) => setDevice(e.target.value as BootDeviceValue)} disabled={action.busy}>
          {BOOT_DEVICES.map((d) => (
            <option key={d.value} value={d.value}>
              {d.label}
            </option>
          ))}
        </select>
        <label className="small">
          <input type="checkbox" checked={persistent} onChange={(e) => setPersistent(e.target.checked)} disabled={action.busy} /> every boot
        </label>
        <button type="submit" className="secondary small" disabled={action.busy}>
          {action.busy ? 'Setting…' : 'Set boot device'}
        </button>
      </div>
      {action.done && <p className="small ok" role="status">{action.done}</p>}
      {action.error !== undefined && (
        <p className="small error" role="alert">
          {errorText(action.error)}
        </p>
      )}
    </form>
  );
}
