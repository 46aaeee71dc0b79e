/**
 * Attachment bytes: a pure function of the attachment's GUID and size, produced in chunks so a 15 MB file is
 * never held in memory. Files start with their format's magic bytes (PNG, PDF, ZIP...) and text formats are
 * printable lines, so a client sniffing content types sees something plausible.
 */
import { createHash } from 'node:crypto';
import { hashString } from './hash.ts';
import { extensionOf } from './text.ts';
import type { AdoAttachment } from './types.ts';

const MAGIC: Record<string, number[]> = {
  png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  jpg: [0xff, 0xd8, 0xff, 0xe0],
  gif: [0x47, 0x49, 0x46, 0x38, 0x39, 0x61],
  pdf: [...Buffer.from('%PDF-1.7\n')],
  zip: [0x50, 0x4b, 0x03, 0x04],
  docx: [0x50, 0x4b, 0x03, 0x04],
  xlsx: [0x50, 0x4b, 0x03, 0x04],
  mp4: [0x00, 0x00, 0x00, 0x18, 0x66, 0x74, 0x79, 0x70],
};
const TEXT = new Set(['txt', 'log', 'csv', 'json', '']);
const PRINTABLE = Buffer.from('abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:-_=');

export const CHUNK = 64 * 1024;

export function* attachmentChunks(
  att: Pick<AdoAttachment, 'id' | 'name' | 'size' | 'bytes'>,
  chunk = CHUNK,
): Generator<Buffer> {
  if (att.bytes) {
    // An uploaded file: its own bytes.
    for (let pos = 0; pos < att.bytes.length; pos += chunk) yield att.bytes.subarray(pos, pos + chunk);
    return;
  }
  const ext = extensionOf(att.name);
  const magic = MAGIC[ext] ?? [];
  const text = TEXT.has(ext);
  // xorshift32, one step for every four bytes (its word's bytes, low first): fast, and the byte sequence does not
  // depend on the chunk size.
  let x = hashString(att.id) || 1;
  let word = 0;
  let pos = 0;
  while (pos < att.size) {
    const len = Math.min(chunk, att.size - pos);
    const buf = Buffer.allocUnsafe(len);
    for (let i = 0; i < len; i++, pos++) {
      if ((pos & 3) === 0) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        x >>>= 0;
        word = x;
      } else word >>>= 8;
      if (pos < magic.length) buf[i] = magic[pos]!;
      else if (text) buf[i] = pos % 81 === 80 ? 0x0a : PRINTABLE[(word & 0xff) % PRINTABLE.length]!;
      else buf[i] = word & 0xff;
    }
    yield buf;
  }
}

/** SHA-256 of the bytes the sandbox serves for this attachment (hex). */
export function attachmentSha256(att: Pick<AdoAttachment, 'id' | 'name' | 'size' | 'bytes'>): string {
  const hash = createHash('sha256');
  for (const c of attachmentChunks(att)) hash.update(c);
  return hash.digest('hex');
}
