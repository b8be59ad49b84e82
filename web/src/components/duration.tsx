const ISO = /^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;

/** The API's ISO 8601 durations ("P5DT12H") the way the CLI takes them ("5d 12h"); anything else as it is. */
export function shortDuration(iso: string): string {
  const m = ISO.exec(iso);
  if (!m) return iso;
  const [, w, d, h, min, s] = m;
  const parts = [
    w && `${w}w`,
    d && `${d}d`,
    h && `${h}h`,
    min && `${min}m`,
    s && `${s}s`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : '0s';
}

/** A duration for people, with the API's exact value in the title; null reads as `none` ("no limit"). */
export function DurationText({ value, none = 'no limit' }: { value: string | null | undefined; none?: string }) {
  if (!value) return <span className="muted">{none}</span>;
  return <span title={value}>{shortDuration(value)}</span>;
}
