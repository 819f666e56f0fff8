import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { Credentials, HttpCall } from '../http/payflow.call.js';
import { ClientSecret, basicCredentials } from './payflow.client-secret.js';
import { capturingLogger } from '../../../test/support/capturing-logger.js';

const ANY_CALL = {} as HttpCall;

/** The id and secret an HTTP Basic header carries (form-decoded). */
async function basicOf(credentials: Credentials): Promise<string> {
  const { header } = await credentials.authorize(ANY_CALL);
  const decoded = Buffer.from(header.replace(/^Basic /, ''), 'base64').toString('utf8');
  return decodeURIComponent(decoded.replace(/\+/g, ' '));
}

describe('basicCredentials', () => {
  it('form-encodes id and secret before the Basic encoding (RFC 6749 §2.3.1)', async () => {
    const { header } = await basicCredentials('my id', 'p@ss:wörd').authorize(ANY_CALL);
    expect(Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8')).toBe(
      'my+id:p%40ss%3Aw%C3%B6rd',
    );
    expect(() => basicCredentials('id', '')).toThrow('clientId and clientSecret are required');
  });
});

describe('ClientSecret', () => {
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'client-secret-'));
    file = join(dir, 'payflow-client-secret');
    writeFileSync(file, 'first-secret\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function secretOf(clientSecretFile: string | undefined = file) {
    const { logger, lines } = capturingLogger();
    const secret = new ClientSecret({
      clientId: 'erp',
      clientSecret: 'first-secret',
      clientSecretFile,
      logger,
    });
    return { secret, lines };
  }

  it('reads a rotated file again: the new secret replaces the old one, and the log names no secret', async () => {
    const { secret, lines } = secretOf();
    const refused = secret.credentials;
    expect(await basicOf(refused)).toBe('erp:first-secret');
    writeFileSync(file, 'second-secret\r\n');
    const fresh = await secret.reread(refused);
    expect(fresh).toBeDefined();
    expect(await basicOf(fresh ?? refused)).toBe('erp:second-secret');
    expect(secret.credentials).toBe(fresh);
    expect(secret.rereadCount).toBe(1);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        file,
        changed: true,
        msg: expect.stringContaining('re-read PAYFLOW_CLIENT_SECRET_FILE') as unknown,
      }),
    ]);
    const logged = JSON.stringify(lines);
    expect(logged).not.toContain('first-secret');
    expect(logged).not.toContain('second-secret');
  });

  it('an unchanged file (one trailing newline aside): nothing new to try, a warning', async () => {
    const { secret, lines } = secretOf();
    const refused = secret.credentials;
    expect(await secret.reread(refused)).toBeUndefined();
    expect(secret.credentials).toBe(refused);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        file,
        changed: false,
        msg: expect.stringContaining('holds the same secret') as unknown,
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('first-secret');
  });

  it('an emptied file: nothing new to try', async () => {
    const { secret, lines } = secretOf();
    writeFileSync(file, '\n');
    expect(await secret.reread(secret.credentials)).toBeUndefined();
    expect(await basicOf(secret.credentials)).toBe('erp:first-secret');
    expect(lines[0]?.msg).toEqual(expect.stringContaining('is empty'));
  });

  it('an unreadable file: nothing new to try, a warning with the error code only', async () => {
    const { secret, lines } = secretOf();
    rmSync(file);
    expect(await secret.reread(secret.credentials)).toBeUndefined();
    expect(lines).toEqual([expect.objectContaining({ level: 40, file, code: 'ENOENT' })]);
  });

  it('no file: never reads, nothing new to try', async () => {
    let reads = 0;
    const { logger, lines } = capturingLogger();
    const secret = new ClientSecret({
      clientId: 'erp',
      clientSecret: 'first-secret',
      clientSecretFile: undefined,
      logger,
      readFile: () => {
        reads += 1;
        return Promise.resolve('other');
      },
    });
    expect(secret.fromFile).toBe(false);
    expect(await secret.reread(secret.credentials)).toBeUndefined();
    expect(reads).toBe(0);
    expect(secret.rereadCount).toBe(0);
    expect(lines).toEqual([]);
  });

  it('single flight: many refusals of the same secret read the file once', async () => {
    let reads = 0;
    let answer!: (content: string) => void;
    const { logger } = capturingLogger();
    const secret = new ClientSecret({
      clientId: 'erp',
      clientSecret: 'first-secret',
      clientSecretFile: '/run/secrets/payflow',
      logger,
      readFile: () => {
        reads += 1;
        return new Promise<string>((resolve) => {
          answer = resolve;
        });
      },
    });
    const refused = secret.credentials;
    const waiting = Array.from({ length: 50 }, () => secret.reread(refused));
    answer('second-secret\n');
    const results = await Promise.all(waiting);
    expect(reads).toBe(1);
    expect(new Set(results)).toEqual(new Set([secret.credentials]));
    expect(await basicOf(secret.credentials)).toBe('erp:second-secret');
    // A refusal of the secret replaced since (a request that left before the re-read) uses
    // the new one without reading the file again.
    expect(await secret.reread(refused)).toBe(secret.credentials);
    expect(reads).toBe(1);
    // A refusal of the new secret reads the file again (it may have changed once more).
    const second = secret.reread(secret.credentials);
    answer('third-secret');
    expect(await basicOf((await second) ?? refused)).toBe('erp:third-secret');
    expect(reads).toBe(2);
  });
});
