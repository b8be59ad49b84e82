// Writes web/public/favicon.ico: the favicon.svg drawing (a white "L" on a rounded blue square) as a 32×32 PNG
// inside an ICO container, for the browsers and tools that ask for /favicon.ico whatever the page links. Run it
// again only when the icon changes; its output is committed.
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const S = 32;
const blue = [0x24, 0x56, 0xa6, 255];
const white = [255, 255, 255, 255];
const clear = [0, 0, 0, 0];

function pixel(x, y) {
  // Rounded corners of radius 6, as the SVG's rx.
  const r = 6;
  const cx = x < r ? r : x >= S - r ? S - r - 1 : x;
  const cy = y < r ? r : y >= S - r ? S - r - 1 : y;
  if ((x - cx) ** 2 + (y - cy) ** 2 > r * r) return clear;
  // The SVG's path M9 7h4v14h10v4H9z.
  if ((x >= 9 && x < 13 && y >= 7 && y < 25) || (x >= 9 && x < 23 && y >= 21 && y < 25)) return white;
  return blue;
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

const raw = Buffer.alloc(S * (S * 4 + 1));
for (let y = 0; y < S; y++) {
  raw[y * (S * 4 + 1)] = 0; // filter: none
  for (let x = 0; x < S; x++) Buffer.from(pixel(x, y)).copy(raw, y * (S * 4 + 1) + 1 + x * 4);
}
const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(S, 0);
ihdr.writeUInt32BE(S, 4);
ihdr.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', ihdr),
  chunk('IDAT', deflateSync(raw)),
  chunk('IEND', Buffer.alloc(0)),
]);

const header = Buffer.alloc(6);
header.writeUInt16LE(0, 0);
header.writeUInt16LE(1, 2); // icon
header.writeUInt16LE(1, 4); // one image
const entry = Buffer.alloc(16);
entry.writeUInt8(S, 0);
entry.writeUInt8(S, 1);
entry.writeUInt16LE(1, 4); // planes
entry.writeUInt16LE(32, 6); // bits per pixel
entry.writeUInt32LE(png.length, 8);
entry.writeUInt32LE(6 + 16, 12);
const out = new URL('../web/public/favicon.ico', import.meta.url);
writeFileSync(out, Buffer.concat([header, entry, png]));
console.log(`wrote ${out.pathname} (${6 + 16 + png.length} bytes)`);
