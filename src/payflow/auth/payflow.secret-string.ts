/**
 * A value that must never reach a log line or an error message (an access token issued on a
 * caller's behalf): it hides itself everywhere a value is usually printed.
 */
/**
 * A secret string that does not print itself: `String(secret)`, `JSON.stringify` and
 * `util.inspect` all give `[redacted]`; `reveal()` returns the value.
 */
export class SecretString {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'SecretString([redacted])';
  }
}
