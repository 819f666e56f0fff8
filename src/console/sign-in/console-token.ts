/**
 * The sign-in token's check: both sides are hashed (SHA-256) first, so that the compare
 * (crypto.timingSafeEqual) runs over equal lengths and its time says nothing about how much
 * of a guess was right, nor about the token's length.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export class ConsoleToken {
  private readonly expected: Buffer;

  constructor(token: string) {
    this.expected = digest(token);
  }

  matches(candidate: string): boolean {
    return timingSafeEqual(digest(candidate), this.expected);
  }
}

/** Two secrets of the caller's (CSRF tokens) compared in constant time. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}
