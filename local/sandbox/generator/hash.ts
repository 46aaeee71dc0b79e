/**
 * Seed derivation. Every lazily generated piece (an item's HTML, its comments, its revisions, an attachment's
 * bytes) draws from its own stream keyed by (world seed, item id, purpose), so the order in which the sandbox
 * serves things never changes what it serves.
 */
import { type Random, seededRandom } from '../common/random.ts';

/** murmur3's finaliser: a cheap 32-bit avalanche. */
function fmix(h: number): number {
  let x = h >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** One 32-bit value from several integers (order matters). */
export function mix(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) h = fmix(Math.imul(h ^ (p | 0), 0x01000193) + 0x7f4a7c15);
  return h;
}

/** FNV-1a over a string, for keys that are names or GUIDs. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix(h);
}

/** The purposes a stream can be drawn for; distinct numbers keep the streams apart. */
export const Purpose = {
  world: 1,
  html: 2,
  comments: 3,
  revisions: 4,
  steps: 5,
  attachment: 6,
  guid: 7,
} as const;

export function rngFor(seed: number, id: number, purpose: number, extra = 0): Random {
  return seededRandom(mix(seed, id, purpose, extra));
}

const hex8 = (n: number) => (n >>> 0).toString(16).padStart(8, '0');

/** A version-4-looking GUID that is a pure function of its inputs. */
export function guidFrom(...parts: number[]): string {
  const a = mix(...parts, 1);
  const b = mix(...parts, 2);
  const c = mix(...parts, 3);
  const d = mix(...parts, 4);
  const h = hex8(a) + hex8(b) + hex8(c) + hex8(d);
  const variant = ((Number.parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
