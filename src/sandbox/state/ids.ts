/**
 * Identifiers the sandbox issues. Payflow ids are 24 lower-case hex characters (like the
 * default payment method id of 24 zeros), built like a MongoDB ObjectId: 4 bytes of
 * seconds, 5 random bytes per process, a 3-byte counter. Unique and cheap (no syscall).
 */
import { randomBytes } from 'node:crypto';

const processPart = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

export function newObjectId(nowMs: number = Date.now()): string {
  counter = (counter + 1) % 0x1000000;
  const seconds = Math.floor(nowMs / 1000) % 0x100000000;
  return (
    seconds.toString(16).padStart(8, '0') + processPart + counter.toString(16).padStart(6, '0')
  );
}

/** An opaque bearer token. */
export function newAccessToken(): string {
  return `sbx_${randomBytes(24).toString('base64url')}`;
}
