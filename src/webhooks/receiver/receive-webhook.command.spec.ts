import { describe, expect, it } from '@jest/globals';
import { buildReceiveCommand, redactBody, redactHeaders } from './receive-webhook.command.js';

const KEY = 'Zm9vYmFyLWJhei1xdXV4LWEtd2ViaG9vay1hcGkta2V5'; // 44 characters, like ours
const TOKEN = 'tok_0123456789abcdefghij';

function command(body: string, headers: Record<string, string> = {}) {
  return buildReceiveCommand({
    token: TOKEN,
    kind: 'payment-update',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.parse(body) as unknown,
    rawBody: Buffer.from(body, 'utf8'),
  });
}

describe('the api key never reaches storage', () => {
  it('replaces the key in the body field, keeping every other byte and valid JSON', () => {
    const body = `{ "paymentId": "pf-1",\n  "api_key": "${KEY}", "status": "PAID" }`;
    const built = command(body);
    expect(built.apiKey).toBe(KEY);
    const stored = built.rawBody.toString('utf8');
    expect(stored).toBe('{ "paymentId": "pf-1",\n  "api_key": "[redacted]", "status": "PAID" }');
    expect(stored).not.toContain(KEY);
    expect(JSON.parse(stored)).toEqual({
      paymentId: 'pf-1',
      api_key: '[redacted]',
      status: 'PAID',
    });
  });

  it('finds the key wherever Payflow put it: nested fields, other fields, URLs in the body', () => {
    const body = JSON.stringify({
      paymentId: 'pf-1',
      callback: { apiKey: KEY, url: `https://bridge.example.com/hook?api_key=${KEY}` },
      meta: [{ 'api-key': 'another-key-entirely-1234' }],
    });
    const stored = command(body, { 'x-api-key': KEY }).rawBody.toString('utf8');
    expect(stored).not.toContain(KEY);
    expect(stored).not.toContain('another-key-entirely-1234');
    expect(JSON.parse(stored)).toEqual({
      paymentId: 'pf-1',
      callback: { apiKey: '[redacted]', url: 'https://bridge.example.com/hook?api_key=[redacted]' },
      meta: [{ 'api-key': '[redacted]' }],
    });
  });

  it('redacts a key written with JSON escapes, keeping every other byte', () => {
    const escaped = KEY.replace('Z', '\\u005a');
    const body = `{"api_key": "${escaped}", "status": "PAID"}`;
    const built = command(body);
    expect(built.apiKey).toBe(KEY);
    expect(built.rawBody.toString('utf8')).toBe('{"api_key": "[redacted]", "status": "PAID"}');
  });

  it('writes the JSON again only for a key field the text cannot redact (not a string)', () => {
    const body = '{"apiKey": {"v": "k-1234567890123456"}, "status": "PAID"}';
    expect(redactBody(Buffer.from(body, 'utf8'), undefined).toString('utf8')).toBe(
      '{"apiKey":"[redacted]","status":"PAID"}',
    );
  });

  it('keeps a body without a key exactly as received', () => {
    const body = '{ "b":1,\n  "a": "ø\\u00e6"  ,"z":[ ] }\n';
    const raw = Buffer.from(body, 'utf8');
    expect(redactBody(raw, KEY)).toBe(raw);
    expect(command(body, { 'x-api-key': KEY }).rawBody.equals(raw)).toBe(true);
    // An empty or null api_key field holds nothing to hide.
    const empty = Buffer.from('{"api_key": null, "x": ""}');
    expect(redactBody(empty, undefined)).toBe(empty);
  });

  it('walks a body nested thousands deep without overflowing the stack', () => {
    const depth = 5_000;
    const body = `${'{"a":'.repeat(depth)}{"apiKey":"other-key"}${'}'.repeat(depth)}`;
    const stored = redactBody(Buffer.from(body, 'utf8'), undefined).toString('utf8');
    expect(stored).not.toContain('other-key');
    expect(stored).toContain('"apiKey":"[redacted]"');
    const numeric = `${'{"a":'.repeat(depth)}{"apiKey":12345678}${'}'.repeat(depth)}`;
    const dropped = redactBody(Buffer.from(numeric, 'utf8'), undefined).toString('utf8');
    expect(dropped).not.toContain('12345678');
    expect(JSON.parse(dropped)).toEqual({
      bodyNotStored: 'an api key field nested too deeply to redact',
    });
    const plain = `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    expect(redactBody(Buffer.from(plain, 'utf8'), undefined).toString('utf8')).toBe(plain);
  });

  it('never searches text for a short key (ours are 43 characters)', () => {
    const raw = Buffer.from('{"status":"PAID","note":"abc"}');
    expect(redactBody(raw, 'abc')).toBe(raw);
  });

  it('redacts credential headers by name and any header holding the key', () => {
    const headers = redactHeaders(
      {
        'X-Api-Key': KEY,
        authorization: `Bearer ${KEY}`,
        cookie: 'session=s',
        'x-forwarded-query': `api_key=${KEY}`,
        'x-trace': 'abc',
      },
      KEY,
    );
    expect(headers).toEqual({
      'x-api-key': '[redacted]',
      authorization: '[redacted]',
      cookie: '[redacted]',
      'x-forwarded-query': '[redacted]',
      'x-trace': 'abc',
    });
  });
});

describe('deduplication of redacted bodies', () => {
  it('gives the same webhook sent again the same key, and another body another key', () => {
    const body = JSON.stringify({ paymentId: 'pf-1', status: 'PAID', api_key: KEY });
    const first = command(body);
    const again = command(body);
    expect(first.dedupeKey).toMatch(/^body:[0-9a-f]{64}$/);
    expect(again.dedupeKey).toBe(first.dedupeKey);
    const other = command(JSON.stringify({ paymentId: 'pf-1', status: 'FAILED', api_key: KEY }));
    expect(other.dedupeKey).not.toBe(first.dedupeKey);
  });

  it('hashes the stored body: the same body with the key in a header is the same webhook', () => {
    const inBody = command(JSON.stringify({ paymentId: 'pf-1', api_key: KEY }));
    const redacted = command(JSON.stringify({ paymentId: 'pf-1', api_key: '[redacted]' }), {
      'x-api-key': KEY,
    });
    expect(redacted.dedupeKey).toBe(inBody.dedupeKey);
  });

  it('still deduplicates by X-Payflow-Delivery when there is one', () => {
    const a = command(JSON.stringify({ status: 'PAID', api_key: KEY }), {
      'x-payflow-delivery': 'd-1',
    });
    const b = command(JSON.stringify({ status: 'PAID', attempt: 2, api_key: KEY }), {
      'x-payflow-delivery': 'd-1',
    });
    expect(a.dedupeKey).toMatch(/^delivery:/);
    expect(b.dedupeKey).toBe(a.dedupeKey);
  });
});
