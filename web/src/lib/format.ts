// Display helpers. The API speaks UTC RFC 3339 and bytes; people read local times and GiB.

const GiB = 1024 ** 3;

/** Memory in binary units (what `memory_mb` means), disk in decimal ones (what `local_gb` means). */
export function formatBytes(bytes: number, unit: 'binary' | 'decimal' = 'binary'): string {
  const base = unit === 'binary' ? 1024 : 1000;
  const names = unit === 'binary' ? ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] : ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let value = bytes;
  let i = 0;
  while (Math.abs(value) >= base && i < names.length - 1) {
    value /= base;
    i++;
  }
  // Three significant digits, as the CLI prints them: 1.03 TB, 515 GB, 64 GiB.
  const digits = Number.isInteger(value) || value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${names[i]}`;
}

export { GiB };

/** A timestamp in the viewer's zone, minutes precision; the exact UTC value belongs in a title attribute. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** "2d 03:04:05", "03:04:05", "00:00:09"; negative or zero is "0:00:00" (the caller says what ended). */
export function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const days = Math.floor(total / 86400);
  const h = Math.floor((total % 86400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const clock = `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
  return days > 0 ? `${days}d ${clock}` : clock;
}

/** "in 3 days", "5 minutes ago": for lists, where a countdown would be noise. */
export function formatRelative(iso: string, now: number = Date.now()): string {
  const diff = Date.parse(iso) - now;
  const abs = Math.abs(diff);
  const units: Array<[number, Intl.RelativeTimeFormatUnit]> = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  const [size, unit] = units.find(([size]) => abs >= size) ?? [1000, 'second'];
  return new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }).format(Math.round(diff / size), unit);
}

export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}
