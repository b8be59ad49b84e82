// Node names that fit a narrow name column and still tell the rows apart, pure.
//
// Cutting every long name at its end ("physics-lab-gpu-a…") makes the rows of one owner or one rack identical,
// because names share their beginning and differ at the end. So a name that does not fit keeps its end, where the
// distinguishing part usually is ("…lab-gpu-a100-01"); when even that leaves two rows alike (names differing in
// the middle, uuids sharing a tail), it keeps as much of its beginning as it takes to tell them apart
// ("phys…a100-01" next to "bio-…a100-01").

export const ELLIPSIS = '…';

/**
 * A label of at most `maxChars` characters for each name (keyed by the name), distinct wherever the names allow it
 * in that room. Names that fit are kept whole. The full name belongs in the row's title and accessible name.
 */
export function shortNames(names: readonly string[], maxChars: number): Map<string, string> {
  const room = Math.max(3, Math.floor(maxChars));
  const unique = [...new Set(names)];
  const labels = new Map<string, string>();
  const long: string[] = [];
  for (const name of unique) {
    if (name.length <= room) labels.set(name, name);
    else long.push(name);
  }
  if (long.length === 0) return labels;

  // First try: the end of the name, as much as fits.
  const byTail = new Map<string, string[]>();
  for (const name of long) {
    const label = headTail(name, 0, room);
    byTail.set(label, [...(byTail.get(label) ?? []), name]);
  }
  const used = new Set(labels.values());
  for (const [label, group] of byTail) if (group.length === 1 && !used.has(label)) labels.set(group[0]!, label);
  for (const label of labels.values()) used.add(label);

  // Alike at the end: the whole group keeps the shortest beginning that tells its names apart (the same length
  // for all, so they line up), and apart from every other label.
  for (const [, group] of byTail) {
    if (group.length === 1 && labels.has(group[0]!)) continue;
    let chosen: string[] = group.map((name) => headTail(name, room - 2, room));
    for (let head = 1; head <= room - 2; head++) {
      const candidates = group.map((name) => headTail(name, head, room));
      if (new Set(candidates).size === candidates.length && candidates.every((c) => !used.has(c))) {
        chosen = candidates;
        break;
      }
    }
    if (new Set(chosen).size < chosen.length) {
      // Same beginning and same end: they differ only in the middle. Show the middle, from just before where they part.
      const middle = middleWindows(group, room);
      if (new Set(middle).size === middle.length && middle.every((c) => !used.has(c))) chosen = middle;
    }
    group.forEach((name, i) => {
      labels.set(name, chosen[i]!);
      used.add(chosen[i]!);
    });
  }
  return labels;
}

/** The first `head` characters, an ellipsis, and as much of the end as fits in `room`. */
function headTail(name: string, head: number, room: number): string {
  return name.slice(0, head) + ELLIPSIS + name.slice(name.length - (room - 1 - head));
}

/**
 * For names alike at both ends: skip what each shares with the name most like it (back to the start of the word where they part, as far as
 * a separator within a few characters) and show what follows, cut with an ellipsis either side.
 */
function middleWindows(group: readonly string[], room: number): string[] {
  const shared = (a: string, b: string) => {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    return i;
  };
  return group.map((name) => {
    // Where this name parts from the one most like it.
    const common = Math.max(0, ...group.filter((other) => other !== name).map((other) => shared(name, other)));
    let start = common;
    const back = name.slice(Math.max(0, common - 6), common);
    const sep = Math.max(back.lastIndexOf('-'), back.lastIndexOf('_'), back.lastIndexOf('.'));
    if (sep >= 0) start = Math.max(0, common - back.length + sep + 1);
    const lead = start > 0 ? ELLIPSIS : '';
    const rest = name.slice(start);
    const fits = room - lead.length;
    return lead + (rest.length <= fits ? rest : rest.slice(0, fits - 1) + ELLIPSIS);
  });
}

/** How many characters of a row's name fit in a name column this wide (px), when text cannot be measured. */
export function nameRoom(columnWidthPx: number): number {
  // 0.6rem padding either side; bold 14 px text averages under 8 px a character (digits and lower case).
  return Math.max(3, Math.floor((columnWidthPx - 20) / 8));
}

/**
 * shortNames() for a column `columnWidthPx` wide, with the room found by measuring the labels (`measure`: the
 * rendered width of a text, px) so that none is cut again by the column; without a measure, by nameRoom().
 */
export function fitShortNames(names: readonly string[], columnWidthPx: number, measure: ((text: string) => number) | null): Map<string, string> {
  let room = nameRoom(columnWidthPx);
  if (measure === null) return shortNames(names, room);
  const available = columnWidthPx - 21; // the padding and the border of the name cell
  // Start a little above the estimate (narrow letters fit more), then give up a character at a time.
  room += 4;
  for (;;) {
    const labels = shortNames(names, room);
    if (room <= 3 || [...labels.values()].every((label) => measure(label) <= available)) return labels;
    room--;
  }
}
