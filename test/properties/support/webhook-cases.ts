/**
 * Generated requests to the worker's webhook endpoint (CONTRACT §5) that must all be
 * refused: made-up and malformed paths, tokens and kinds, missing, wrong, mangled and
 * borrowed api keys in each of the three places a key is read from, odd content types, and
 * bodies that are not JSON, not objects, invalid UTF-8, 2 MB, nested 5,000 deep or trying
 * prototype pollution; other methods too. Some use a real payment's token, and some even its
 * real api key, with something else wrong (kind, body, content type, size, method), so the
 * requests get past each of the receiver's checks in turn.
 *
 * A generated request is a recipe over the real payments of the run (their tokens and keys
 * are known only once the payments exist); none of them is a valid webhook, so none may be
 * stored, and none may be answered 5xx or with a stack trace.
 */
import fc from 'fast-check';
import { NESTING_DEPTH } from './erp-cases.js';

export interface RealPayment {
  readonly token: string;
  readonly apiKey: string;
}

export interface WebhookRequest {
  readonly index: number;
  readonly kind: string;
  readonly detail: string;
  readonly method: string;
  /** As sent on the request line (printable ASCII and Latin-1 bytes only). */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer | undefined;
}

export type WebhookRecipe = (payments: readonly RealPayment[], index: number) => WebhookRequest;

export const WEBHOOK_KINDS = ['payment-update', 'status-update', 'terminal-failure'] as const;
/** The worker's body limit (worker.ts: bodyLimit). */
export const BODY_LIMIT_BYTES = 256 * 1024;

export function generateWebhookRequests(
  runs: number,
  seed: number,
  payments: readonly RealPayment[],
): WebhookRequest[] {
  return fc
    .sample(webhookRequestArbitrary(), { numRuns: runs, seed })
    .map((recipe, index) => recipe(payments, index));
}

// ------------------------------------------------------------------------- building blocks

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** A token of the real shape that no payment has. */
const fakeToken: fc.Arbitrary<string> = fc
  .array(fc.constantFrom(...BASE64URL), { minLength: 16, maxLength: 128 })
  .map((chars) => chars.join(''));

/** Bytes of a path segment, percent-encoded where a request line needs it. */
const percentEncoded = (text: string): string =>
  [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

/** A path segment that cannot be a token: wrong length, characters, encodings. */
const oddSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    'x',
    'short-token',
    '..',
    '.',
    '%2e%2e',
    '%2F',
    'a%2Fb%2Fc',
    '%00',
    '%',
    '%zz',
    '%E0%A4%A',
    '%C0%AF',
    '%FF%FE',
    'tok;en',
    'tok,en',
    '~',
    '*',
    '$%7Bjndi:ldap%7D',
    '%3Cscript%3E',
    'null',
    'undefined',
    '__proto__',
    'constructor',
  ),
  fc
    .array(fc.constantFrom(...BASE64URL), { minLength: 129, maxLength: 400 })
    .map((chars) => chars.join('')),
  fc
    .array(fc.constantFrom(...BASE64URL), { minLength: 1, maxLength: 15 })
    .map((chars) => chars.join('')),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).map(percentEncoded),
  // Raw Latin-1 bytes on the request line (undici sends them as they are).
  fc.string({ unit: fc.constantFrom('é', 'ø', 'ÿ', '¡', '\u0080'), minLength: 1, maxLength: 8 }),
);

const badKind: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'payment-updated',
    'Payment-Update',
    'PAYMENT-UPDATE',
    'payment_update',
    'status',
    'update',
    'payment-update%20',
    'payment-update%00',
    '',
    'webhook',
    '__proto__',
  ),
  fc
    .stringMatching(/^[a-z]{1,12}(-[a-z]{1,12})?$/)
    .filter((kind) => !(WEBHOOK_KINDS as readonly string[]).includes(kind)),
);

const goodKind = fc.constantFrom(...WEBHOOK_KINDS);

/** A key that is not the payment's: it differs in content, not only in surrounding spaces. */
function wrongKeyFor(real: string): fc.Arbitrary<string> {
  return fc
    .oneof(
      fakeToken,
      fc.constantFrom(
        `${real}x`,
        real.slice(0, -1),
        real.slice(1),
        `x${real}`,
        real.toUpperCase() === real ? real.toLowerCase() : real.toUpperCase(),
        `${real.slice(0, 8)}${'A'.repeat(Math.max(0, real.length - 8))}`,
        real.split('').reverse().join(''),
        `${real} ${real}`,
      ),
    )
    .filter((key) => key.trim() !== real);
}

/** Header values must be printable (undici and HTTP refuse control characters). */
const headerText: fc.Arbitrary<string> = fc
  .string({
    unit: fc.constantFrom(...'abcXYZ019 -_.:;,/=+*"\'()<>[]{}?@!#$%&^|~`\\é'),
    maxLength: 60,
  })
  .map((text) => text.trim());

/** Media types that are not JSON (or no media type at all). */
const NOT_JSON = [
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/xml',
  'application/octet-stream',
  'application/jsonx',
  'application/json-patch+json',
  'application/*',
  '*/*',
  'a/b/c',
  'json',
  ';',
] as const;

const contentTypes: fc.Arbitrary<string | undefined> = fc.constantFrom(
  undefined,
  '',
  ...NOT_JSON,
  // JSON still: RFC 8259 defines no charset parameter ("no effect on compliant recipients").
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json;;;',
  'application/json, text/plain',
);

const jsonContentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON',
  'application/json;charset=UTF-8',
);

/** Bodies that are not a JSON object (or not JSON at all, or too big). */
const badBody: fc.Arbitrary<{ detail: string; bytes: Buffer }> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .jsonValue({ maxDepth: 2 })
      .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
      .map((value) => ({
        detail: `JSON ${preview(JSON.stringify(value))}`,
        bytes: Buffer.from(JSON.stringify(value)),
      })),
  },
  {
    weight: 4,
    arbitrary: fc
      .constantFrom(
        '',
        ' ',
        '{',
        '{"a":1,}',
        "{'a':1}",
        '{"a":01}',
        'NaN',
        'undefined',
        '{"a":1}{"b":2}',
        '{"a":"\\x41"}',
        '<webhook/>',
        'paymentId=1&status=paid',
        '\u0000',
      )
      .map((text) => ({ detail: `text ${preview(text)}`, bytes: Buffer.from(text) })),
  },
  {
    weight: 2,
    arbitrary: fc
      .string({ unit: 'binary', maxLength: 60 })
      .filter((text) => !isJsonObject(text))
      .map((text) => ({ detail: `text ${preview(text)}`, bytes: Buffer.from(text) })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xc0, 0xaf])
      .map((bytes) => ({
        detail: `invalid UTF-8 ${Buffer.from(bytes).toString('hex')} outside a string`,
        bytes: Buffer.concat([Buffer.from('{"a":'), Buffer.from(bytes), Buffer.from('}')]),
      })),
  },
  {
    weight: 1,
    arbitrary: fc.constant({
      detail: `arrays nested ${NESTING_DEPTH} deep`,
      bytes: Buffer.from(`${'['.repeat(NESTING_DEPTH)}${']'.repeat(NESTING_DEPTH)}`),
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        '{"__proto__":{"polluted":true}}',
        '{"a":{"__proto__":{"polluted":true}}}',
        '{"constructor":{"prototype":{"polluted":true}}}',
      )
      .map((text) => ({ detail: `prototype pollution ${text}`, bytes: Buffer.from(text) })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(BODY_LIMIT_BYTES + 1, 300 * 1024, 2 * 1024 * 1024).map((size) => ({
      detail: `a JSON object of ${size} bytes (limit ${BODY_LIMIT_BYTES})`,
      bytes: Buffer.from(`{"pad":"${'x'.repeat(size - 10)}"}`),
    })),
  },
);

/** Any body at all: a JSON object (deep, with keys or not) or one of the bad ones. */
const anyBody: fc.Arbitrary<{ detail: string; bytes: Buffer }> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 })
      .map((value) => ({
        detail: `JSON object ${preview(JSON.stringify(value))}`,
        bytes: Buffer.from(JSON.stringify(value)),
      })),
  },
  {
    weight: 1,
    arbitrary: fc.constant({
      detail: `objects nested ${NESTING_DEPTH} deep`,
      bytes: Buffer.from(`${'{"a":'.repeat(NESTING_DEPTH)}1${'}'.repeat(NESTING_DEPTH)}`),
    }),
  },
  { weight: 3, arbitrary: badBody },
);

/** Other headers a sender might add (never a key of a real payment). */
const extraHeaders: fc.Arbitrary<Record<string, string>> = fc
  .dictionary(
    fc.oneof(
      fc.constantFrom(
        'x-payflow-delivery',
        'x-forwarded-for',
        'x-organization-id',
        'traceparent',
        'cookie',
        'user-agent',
        'x-http-method-override',
        'transfer-encoding-x',
      ),
      fc.stringMatching(/^x-[a-z]{1,10}$/),
    ),
    headerText,
    { maxKeys: 3 },
  )
  .map((headers) => ({ ...headers }));

// ---------------------------------------------------------------------------- the recipes

type Auth =
  | { readonly where: 'none' }
  | {
      readonly where: 'x-api-key' | 'bearer' | 'body' | 'basic' | 'bearer-empty';
      readonly key: string;
    };

interface Parts {
  readonly kind: string;
  readonly detail: string;
  readonly method?: string;
  readonly segments: readonly string[];
  readonly auth: Auth;
  readonly contentType: string | undefined;
  readonly body: { detail: string; bytes: Buffer } | undefined;
  readonly headers?: Record<string, string>;
  readonly query?: string;
}

function build(parts: Parts, index: number): WebhookRequest {
  const headers: Record<string, string> = { ...parts.headers };
  let body = parts.body?.bytes;
  switch (parts.auth.where) {
    case 'x-api-key':
      headers['x-api-key'] = parts.auth.key;
      break;
    case 'bearer':
      headers.authorization = `Bearer ${parts.auth.key}`;
      break;
    case 'bearer-empty':
      headers.authorization = 'Bearer';
      break;
    case 'basic':
      headers.authorization = `Basic ${Buffer.from(`x:${parts.auth.key}`).toString('base64')}`;
      break;
    case 'body': {
      const text = body?.toString('utf8') ?? '{}';
      // Into a JSON object body; a body that is none stays as it is.
      body = isJsonObject(text) ? (withMember(text, 'api_key', parts.auth.key) ?? body) : body;
      break;
    }
    case 'none':
      break;
  }
  if (parts.contentType !== undefined) headers['content-type'] = parts.contentType;
  const path = `/${parts.segments.join('/')}${parts.query ?? ''}`;
  return {
    index,
    kind: parts.kind,
    detail: `${parts.detail}; key ${parts.auth.where}; content-type ${parts.contentType ?? '(none)'}; body ${parts.body?.detail ?? '(none)'}`,
    method: parts.method ?? 'POST',
    path,
    headers,
    body: parts.method === 'GET' || parts.method === 'HEAD' ? undefined : body,
  };
}

const realIndex = fc.nat();

const pickPayment = (payments: readonly RealPayment[], n: number): RealPayment => {
  const payment = payments[n % Math.max(1, payments.length)];
  if (payment === undefined) throw new Error('no real payments to aim at');
  return payment;
};

const keyPlace = fc.constantFrom<'x-api-key' | 'bearer' | 'body'>('x-api-key', 'bearer', 'body');

/** Made-up addresses: fake or malformed tokens, any kind, any key, any body. */
const unknownAddress: fc.Arbitrary<WebhookRecipe> = fc
  .record({
    token: fc.oneof({ weight: 3, arbitrary: fakeToken }, { weight: 2, arbitrary: oddSegment }),
    kind: fc.oneof(goodKind, badKind),
    keyPlace: fc.constantFrom<'none' | 'x-api-key' | 'bearer' | 'body'>(
      'none',
      'x-api-key',
      'bearer',
      'body',
    ),
    key: fakeToken,
    contentType: fc.oneof(
      { weight: 3, arbitrary: jsonContentType },
      { weight: 1, arbitrary: contentTypes },
    ),
    body: anyBody,
    headers: extraHeaders,
  })
  .map(
    (r): WebhookRecipe =>
      (_payments, index) =>
        build(
          {
            kind: 'unknown_address',
            detail: `token ${preview(r.token)}, kind ${preview(r.kind)}`,
            segments: ['webhooks', 'payflow', r.token, r.kind],
            auth: r.keyPlace === 'none' ? { where: 'none' } : { where: r.keyPlace, key: r.key },
            contentType: r.contentType,
            body: r.body,
            headers: r.headers,
          },
          index,
        ),
  );

/** A real payment's address with a missing, wrong or borrowed key. */
const wrongKey: fc.Arbitrary<WebhookRecipe> = fc
  .record({
    payment: realIndex,
    other: realIndex,
    kind: goodKind,
    how: fc.constantFrom('none', 'wrong', 'borrowed', 'empty', 'basic', 'bearer-empty', 'query'),
    place: keyPlace,
    mangle: fc.nat(),
    contentType: jsonContentType,
    body: fc
      .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 })
      .map((value) => ({
        detail: `JSON object ${preview(JSON.stringify(value))}`,
        bytes: Buffer.from(JSON.stringify(value)),
      })),
    headers: extraHeaders,
  })
  .map((r): WebhookRecipe => (payments, index) => {
    const payment = pickPayment(payments, r.payment);
    const borrowed = pickPayment(
      payments,
      r.payment + 1 + (r.other % Math.max(1, payments.length - 1)),
    );
    const wrong = fc.sample(wrongKeyFor(payment.apiKey), { numRuns: 1, seed: r.mangle })[0] ?? 'x';
    let auth: Auth = { where: 'none' };
    let query: string | undefined;
    switch (r.how) {
      case 'wrong':
        auth = { where: r.place, key: wrong };
        break;
      case 'borrowed':
        auth = {
          where: r.place,
          key: borrowed.apiKey === payment.apiKey ? wrong : borrowed.apiKey,
        };
        break;
      case 'empty':
        auth = { where: r.place, key: '' };
        break;
      case 'basic':
        auth = { where: 'basic', key: payment.apiKey };
        break;
      case 'bearer-empty':
        auth = { where: 'bearer-empty', key: '' };
        break;
      case 'query':
        // The key in the query string is no place the contract reads it from.
        query = `?api_key=${encodeURIComponent(payment.apiKey)}`;
        break;
      case 'none':
        break;
    }
    return build(
      {
        kind: 'wrong_key',
        detail: `real token, key ${r.how}`,
        segments: ['webhooks', 'payflow', payment.token, r.kind],
        auth,
        contentType: r.contentType,
        body: r.body,
        headers: r.headers,
        ...(query === undefined ? {} : { query }),
      },
      index,
    );
  });

/** A real payment's address and its real key, with something else wrong. */
const authenticButBroken: fc.Arbitrary<WebhookRecipe> = fc
  .record({
    payment: realIndex,
    place: keyPlace,
    what: fc.constantFrom('kind', 'body', 'content_type', 'method', 'path'),
    kind: badKind,
    goodKind,
    body: badBody,
    contentType: fc.constantFrom(undefined, ...NOT_JSON),
    method: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'),
    // Not '': a trailing slash may well route to the endpoint itself.
    extra: oddSegment.filter((segment) => segment !== ''),
  })
  .map((r): WebhookRecipe => (payments, index) => {
    const payment = pickPayment(payments, r.payment);
    const okBody = { detail: 'a JSON object', bytes: Buffer.from('{"event":"payment.updated"}') };
    // A key in the body needs a JSON object body: with a bad body it goes in a header.
    const place = r.what === 'body' && r.place === 'body' ? 'x-api-key' : r.place;
    const auth: Auth = { where: place, key: payment.apiKey };
    const segments = [
      'webhooks',
      'payflow',
      payment.token,
      r.what === 'kind' ? r.kind : r.goodKind,
    ];
    switch (r.what) {
      case 'kind':
        return build(
          {
            kind: 'authentic_bad_kind',
            detail: `real token and key, kind ${preview(r.kind)}`,
            segments,
            auth,
            contentType: 'application/json',
            body: okBody,
          },
          index,
        );
      case 'body':
        return build(
          {
            kind: 'authentic_bad_body',
            detail: 'real token and key',
            segments,
            auth,
            contentType: 'application/json',
            body: r.body,
          },
          index,
        );
      case 'content_type':
        return build(
          {
            kind: 'authentic_bad_content_type',
            detail: 'real token and key',
            segments,
            auth: place === 'body' ? { where: 'x-api-key', key: payment.apiKey } : auth,
            contentType: r.contentType,
            body: okBody,
          },
          index,
        );
      case 'method':
        return build(
          {
            kind: 'authentic_bad_method',
            detail: `real token and key, ${r.method}`,
            method: r.method,
            segments,
            auth: place === 'body' ? { where: 'x-api-key', key: payment.apiKey } : auth,
            contentType: 'application/json',
            body: okBody,
          },
          index,
        );
      case 'path':
        return build(
          {
            kind: 'authentic_bad_path',
            detail: `real token and key, extra segment ${preview(r.extra)}`,
            segments: [...segments, r.extra],
            auth,
            contentType: 'application/json',
            body: okBody,
          },
          index,
        );
    }
  });

/**
 * Addresses beside the endpoint: other prefixes, cases, slashes, the other routes. With a
 * wrong key (a router may lawfully treat some of them as the endpoint itself).
 */
const besideTheEndpoint: fc.Arbitrary<WebhookRecipe> = fc
  .record({
    payment: realIndex,
    shape: fc.constantFrom(
      (token: string) => `/webhooks/payflow/${token}`,
      (_token: string, kind: string) => `/webhooks/payflow/${kind}`,
      () => '/webhooks/payflow',
      () => '/webhooks/payflow/',
      (token: string, kind: string) => `/webhooks/payflow//${token}/${kind}`,
      (token: string, kind: string) => `/webhooks/payflow/${token}//${kind}`,
      (token: string, kind: string) => `/webhooks/payflow/${token}/${kind}/`,
      (token: string, kind: string) => `/WEBHOOKS/payflow/${token}/${kind}`,
      (token: string, kind: string) => `/webhooks/Payflow/${token}/${kind}`,
      (token: string, kind: string) => `//webhooks/payflow/${token}/${kind}`,
      (token: string, kind: string) => `/webhooks/payflow/${token}/${kind}/../../../health/live`,
      (token: string, kind: string) => `/webhooks/payflow/${token}/${kind}%2F..%2F..`,
      (token: string, kind: string) => `/webhooks/payflow/${token}/${kind};jsessionid=1`,
      (token: string, kind: string) => `/webhooks/payflow/${token}/${kind}#fragment`,
      (token: string, kind: string) => `/webhooks/payflow/${token.toUpperCase()}/${kind}`,
      () => '/health/live',
      () => '/metrics',
      () => '/',
      () => '/webhooks',
    ),
    kind: goodKind,
    body: anyBody,
    key: fakeToken,
  })
  .map((r): WebhookRecipe => (payments, index) => {
    const payment = pickPayment(payments, r.payment);
    const path = r.shape(payment.token, r.kind);
    return {
      ...build(
        {
          kind: 'beside_the_endpoint',
          detail: `path ${preview(path.replace(payment.token, '{token}'))}`,
          segments: [],
          auth: { where: 'x-api-key', key: r.key },
          contentType: 'application/json',
          body: r.body,
        },
        index,
      ),
      path,
    };
  });

/** All families, weighted. */
export function webhookRequestArbitrary(): fc.Arbitrary<WebhookRecipe> {
  return fc.oneof(
    { weight: 40, arbitrary: unknownAddress },
    { weight: 30, arbitrary: wrongKey },
    { weight: 20, arbitrary: authenticButBroken },
    { weight: 10, arbitrary: besideTheEndpoint },
  );
}

// ------------------------------------------------------------------------------- helpers

/** The JSON object `text` with one more member; undefined when it is too deep to rewrite. */
function withMember(text: string, name: string, value: string): Buffer | undefined {
  try {
    return Buffer.from(JSON.stringify({ ...(JSON.parse(text) as object), [name]: value }));
  } catch {
    return undefined;
  }
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

function preview(text: string, max = 50): string {
  const shown = JSON.stringify(text);
  return shown.length <= max ? shown : `${shown.slice(0, max)}…(${text.length} chars)`;
}
