/**
 * SASL/OAUTHBEARER tokens for the Kafka client: an OAuth 2.0 client-credentials request to
 * KAFKA_SASL_OAUTHBEARER_TOKEN_URL (form body, the client id and secret by HTTP Basic, the
 * optional scope), the answer validated with zod, and the token cached and fetched again
 * before it expires (TokenCache: at half its lifetime, or 60 s before it ends when sooner).
 *
 * The client secret is read again from KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET_FILE for every
 * token request (currentSecret), so a secret rotated in its file is used from the next
 * token on, without a restart.
 *
 * kafkajs asks for a token on every new connection and before it re-authenticates one
 * (KIP-368, when the brokers set `connections.max.reauth.ms`); each ask is answered from the
 * cache, so the brokers never see a token about to expire.
 *
 * The SASL exchange is ours (oauthBearerMechanism), not kafkajs' built-in one: when the
 * brokers refuse a token they answer with an error challenge (RFC 7628 §3.2.2), which
 * kafkajs 2.2.4 ignores, taking the connection for authenticated; every request after it then
 * fails as a closed connection and is retried for minutes. Ours reads the challenge and
 * fails at once, saying why.
 */
import { readFileSync } from 'node:fs';
import type { AuthenticationProviderArgs, Mechanism } from 'kafkajs';
import { request, type Dispatcher } from 'undici';
import { z } from 'zod';
import { AppError } from '../../errors/app-error.js';
import { secretFromFileContent } from '../../config/app-config.js';
import { KafkaAccessError } from './kafka-access.js';
import { TokenCache, tokenLifetimeSeconds } from '../../payflow/auth/payflow.token.js';

export interface OAuthBearerSettings {
  /** KAFKA_SASL_OAUTHBEARER_TOKEN_URL */
  readonly tokenUrl: string;
  /** KAFKA_SASL_OAUTHBEARER_CLIENT_ID */
  readonly clientId: string;
  /** KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET (as read at start-up) */
  readonly clientSecret: string;
  /**
   * KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET_FILE: read again for every token request, so that a
   * secret rotated in its file is used from the next token on, without a restart.
   */
  readonly clientSecretFile?: string | undefined;
  /** KAFKA_SASL_OAUTHBEARER_SCOPE */
  readonly scope?: string | undefined;
  /** Time-out of one token request. Default 10 s. */
  readonly timeoutMs?: number;
  /** The HTTP client (tests); default undici's global dispatcher. */
  readonly dispatcher?: Dispatcher;
  readonly now?: () => number;
}

/** RFC 6749 §5.1; `token_type` is `Bearer` in any case (§7.1), `expires_in` in seconds. */
const tokenAnswerSchema = z.object({
  access_token: z.string().min(1),
  token_type: z
    .string()
    .refine((type) => type.toLowerCase() === 'bearer', { message: 'must be Bearer' }),
  expires_in: z.coerce.number().positive().optional(),
});

/** RFC 6749 §5.2 */
const tokenErrorSchema = z.object({
  error: z.string().min(1).max(200),
  error_description: z.string().max(500).optional(),
});

/** The token endpoint did not give a token. Never carries the secret or a token. */
export class KafkaTokenRequestError extends AppError {
  readonly code = 'kafka.oauthbearer_token_failed';
  readonly transient: boolean;
  /** kafkajs retries a connection only when this is true (a token endpoint briefly down). */
  readonly retriable: boolean;

  constructor(
    settings: Pick<OAuthBearerSettings, 'tokenUrl' | 'clientId'>,
    problem: string,
    options: { transient: boolean; cause?: unknown; status?: number },
  ) {
    super(
      `Kafka OAUTHBEARER token request failed (KAFKA_SASL_OAUTHBEARER_TOKEN_URL ` +
        `${redactUrl(settings.tokenUrl)}, client ${settings.clientId}): ${problem}`,
      {
        cause: options.cause,
        metadata: { clientId: settings.clientId, status: options.status ?? null },
      },
    );
    this.transient = options.transient;
    this.retriable = options.transient;
  }
}

/** The URL without credentials or query (which could carry secrets). */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

/**
 * The client secret for the next token request: the file's content now, when the secret
 * came from a file; the secret read at start-up when there is no file, or when it cannot be
 * read now or is empty (a Secret being replaced), so a bad moment costs nothing.
 */
export function currentSecret(
  settings: Pick<OAuthBearerSettings, 'clientSecret' | 'clientSecretFile'>,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): string {
  if (settings.clientSecretFile === undefined) return settings.clientSecret;
  try {
    const secret = secretFromFileContent(readFile(settings.clientSecretFile));
    return secret === '' ? settings.clientSecret : secret;
  } catch {
    return settings.clientSecret;
  }
}

/** One client-credentials token request; the answer validated. */
export async function requestClientCredentialsToken(
  settings: OAuthBearerSettings,
): Promise<{ accessToken: string; expiresInSeconds: number }> {
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  if (settings.scope !== undefined) body.set('scope', settings.scope);
  // RFC 6749 §2.3.1: id and secret form-urlencoded, then Basic.
  const basic = Buffer.from(
    `${encodeURIComponent(settings.clientId)}:${encodeURIComponent(currentSecret(settings))}`,
  ).toString('base64');
  const timeoutMs = settings.timeoutMs ?? 10_000;
  let answer: Dispatcher.ResponseData;
  try {
    answer = await request(settings.tokenUrl, {
      method: 'POST',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: body.toString(),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
      ...(settings.dispatcher === undefined ? {} : { dispatcher: settings.dispatcher }),
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new KafkaTokenRequestError(settings, `no answer (${reason})`, {
      transient: true,
      cause: error,
    });
  }
  const text = await answer.body.text().catch(() => '');
  const json = parseJson(text);
  if (answer.statusCode !== 200) {
    const oauthError = tokenErrorSchema.safeParse(json);
    const what = oauthError.success
      ? `${oauthError.data.error}${oauthError.data.error_description === undefined ? '' : ` (${oauthError.data.error_description})`}`
      : 'no OAuth error in the answer';
    throw new KafkaTokenRequestError(settings, `HTTP ${answer.statusCode}: ${what}`, {
      transient: answer.statusCode >= 500 || answer.statusCode === 429,
      status: answer.statusCode,
    });
  }
  const parsed = tokenAnswerSchema.safeParse(json);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => issue.path.join('.') || '(answer)');
    throw new KafkaTokenRequestError(
      settings,
      `the answer is not a token answer (${[...new Set(fields)].join(', ')})`,
      { transient: false, status: answer.statusCode },
    );
  }
  return {
    accessToken: parsed.data.access_token,
    expiresInSeconds: tokenLifetimeSeconds(parsed.data.expires_in),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** What kafkajs' `sasl.oauthBearerProvider` returns. */
export interface OAuthBearerToken {
  readonly value: string;
}

/** A token source for kafkajs: cached, one request at a time, refreshed before expiry. */
export class OAuthBearerTokenSource {
  private readonly cache: TokenCache;

  constructor(readonly settings: OAuthBearerSettings) {
    this.cache = new TokenCache(() => requestClientCredentialsToken(settings), settings.now);
  }

  /** kafkajs' `oauthBearerProvider`. */
  readonly provide = async (): Promise<OAuthBearerToken> => ({
    value: (await this.cache.get()).accessToken,
  });

  /** Token requests made so far. */
  get fetchCount(): number {
    return this.cache.fetchCount;
  }
}

/** US-ASCII SOH, the separator of RFC 7628's messages. */
const SOH = '\u0001';

/** A BYTES field of the Kafka protocol: int32 length, then the bytes. */
function kafkaBytes(payload: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(payload.length);
  return Buffer.concat([length, payload]);
}

/** The server's error challenge (RFC 7628 §3.2.2), e.g. `{"status":"invalid_token"}`. */
const errorChallengeSchema = z.object({
  status: z.string().max(100),
  scope: z.string().max(500).optional(),
});

/** What the brokers said about a refused token, without the token. */
export function describeErrorChallenge(challenge: Buffer): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(challenge.toString('utf8'));
  } catch {
    return 'the brokers refused the token';
  }
  const error = errorChallengeSchema.safeParse(parsed);
  if (!error.success) return 'the brokers refused the token';
  return (
    `the brokers refused the token (status ${error.data.status}` +
    `${error.data.scope === undefined ? '' : `, scope ${error.data.scope}`})`
  );
}

/**
 * The kafkajs SASL mechanism OAUTHBEARER over a token source: the client's initial response
 * (RFC 7628 §3.1, `n,,^Aauth=Bearer <token>^A^A`), and a KafkaAccessError when the brokers
 * answer it with an error challenge. `identity` names us in that error.
 */
export function oauthBearerMechanism(tokens: OAuthBearerTokenSource, identity: string): Mechanism {
  return {
    mechanism: 'OAUTHBEARER',
    authenticationProvider: ({ saslAuthenticate }: AuthenticationProviderArgs) => ({
      authenticate: async () => {
        const token = await tokens.provide();
        const initial = Buffer.from(`n,,${SOH}auth=Bearer ${token.value}${SOH}${SOH}`, 'utf8');
        const answer = await saslAuthenticate<Buffer>({
          request: { encode: () => kafkaBytes(initial) },
          // kafkajs hands the server's bytes over as a BYTES field (length first).
          response: { decode: (raw) => raw, parse: (raw) => raw.subarray(4) },
        });
        if (answer instanceof Buffer && answer.length > 0) {
          throw new KafkaAccessError(
            'authentication_failed',
            `Kafka authentication failed (${identity}): ${describeErrorChallenge(answer)}`,
            { identity },
          );
        }
      },
    }),
  };
}
