/**
 * The client's own credentials (client id and secret) for the token request, and how a rotated
 * secret is picked up without a restart.
 *
 * The rule (issue 18 §3): when the token endpoint answers `invalid_client` and the secret came
 * from a file (PAYFLOW_CLIENT_SECRET_FILE), the file is read again; a different secret replaces
 * the one in memory and the token is requested once more with it (payflow.auth.ts). Kubernetes
 * and Docker update a mounted secret file in place, so the file holds the new secret once the
 * operator has rotated it. No file, an unchanged file or an unreadable one: the refusal stands.
 *
 * Single flight: however many token requests were refused with the same secret, the file is
 * read once; a request refused with a secret that has been replaced since just uses the new one.
 * Logs name the file and never the secret.
 */
import { fileErrorCode } from '../../errors/file-error.js';
import { readFile } from 'node:fs/promises';
import type { AppLogger } from '../../logging/logger.js';
import { secretFromFileContent } from '../../config/app-config.js';
import type { Authorization, Credentials } from '../http/payflow.call.js';

export interface ClientSecretSettings {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Where the secret was read from (PAYFLOW_CLIENT_SECRET_FILE); unset: it cannot change. */
  readonly clientSecretFile: string | undefined;
  readonly logger: AppLogger;
  /** Reads the file (tests); default: fs, UTF-8. */
  readonly readFile?: (path: string) => Promise<string>;
}

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 appendix B). */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/**
 * The token request's credentials for one client id and secret: HTTP Basic client
 * authentication, form-encoded first (RFC 6749 §2.3.1). A fresh try cannot change them.
 */
export function basicCredentials(clientId: string, clientSecret: string): Credentials {
  if (!clientId || !clientSecret) {
    throw new Error('PayflowClient: clientId and clientSecret are required');
  }
  const encoded = Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`);
  const basic: Authorization = { header: `Basic ${encoded.toString('base64')}` };
  return { authorize: () => Promise.resolve(basic) };
}

export class ClientSecret {
  #secret: string;
  #credentials: Credentials;
  #rereading: Promise<Credentials | undefined> | undefined;
  #rereads = 0;
  private readonly read: (path: string) => Promise<string>;

  constructor(private readonly settings: ClientSecretSettings) {
    this.#secret = settings.clientSecret;
    this.#credentials = basicCredentials(settings.clientId, settings.clientSecret);
    this.read = settings.readFile ?? ((path) => readFile(path, 'utf8'));
  }

  /** The credentials of the secret in use now. */
  get credentials(): Credentials {
    return this.#credentials;
  }

  /** Whether a refused secret can be replaced at all (it came from a file). */
  get fromFile(): boolean {
    return this.settings.clientSecretFile !== undefined;
  }

  /** How many times the file was read again (diagnostics and tests). */
  get rereadCount(): number {
    return this.#rereads;
  }

  /**
   * The token endpoint refused `rejected` (invalid_client): the credentials to try once more,
   * or undefined when there is nothing new to try (no file, the same secret, a read failure).
   * Refused credentials that were already replaced give the current ones without a read.
   */
  reread(rejected: Credentials): Promise<Credentials | undefined> {
    if (rejected !== this.#credentials) return Promise.resolve(this.#credentials);
    const path = this.settings.clientSecretFile;
    if (path === undefined) return Promise.resolve(undefined);
    this.#rereading ??= this.readAgain(path).finally(() => {
      this.#rereading = undefined;
    });
    return this.#rereading;
  }

  private async readAgain(path: string): Promise<Credentials | undefined> {
    const { logger } = this.settings;
    this.#rereads += 1;
    let secret: string;
    try {
      secret = secretFromFileContent(await this.read(path));
    } catch (error) {
      logger.warn(
        { file: path, code: fileErrorCode(error) },
        'payflow refused the client secret (invalid_client) and PAYFLOW_CLIENT_SECRET_FILE cannot be read again',
      );
      return undefined;
    }
    if (secret === '' || secret === this.#secret) {
      logger.warn(
        { file: path, changed: false },
        secret === ''
          ? 'payflow refused the client secret (invalid_client); PAYFLOW_CLIENT_SECRET_FILE was re-read and is empty'
          : 'payflow refused the client secret (invalid_client); PAYFLOW_CLIENT_SECRET_FILE was re-read and holds the same secret',
      );
      return undefined;
    }
    this.#secret = secret;
    this.#credentials = basicCredentials(this.settings.clientId, secret);
    logger.info(
      { file: path, changed: true },
      'payflow refused the client secret (invalid_client); re-read PAYFLOW_CLIENT_SECRET_FILE, requesting the token again with the new secret',
    );
    return this.#credentials;
  }
}
