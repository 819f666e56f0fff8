/**
 * When each certificate the worker loads expires, as a gauge on /metrics:
 * `payflow_bridge_certificate_expiry_timestamp_seconds{certificate="…"}` (unix seconds), so
 * that an alert can warn weeks before a listener, Kafka or Postgres refuses the worker.
 *
 * The certificates are the files of the configuration (never their content, never a key):
 * | certificate         | variable                 | what it is                               |
 * |---------------------|--------------------------|------------------------------------------|
 * | `public_tls`        | TLS_CERT_FILE            | the public listener's chain (webhooks)   |
 * | `management_tls`    | MANAGEMENT_TLS_CERT_FILE | the management listener's chain          |
 * | `kafka_ca`          | KAFKA_SSL_CA_FILE        | the CA(s) the worker trusts for brokers  |
 * | `kafka_client`      | KAFKA_SSL_CERT_FILE      | the worker's client chain (Kafka mTLS)   |
 * | `postgres_ca`       | DATABASE_SSL_CA_FILE     | the CA(s) the worker trusts for Postgres |
 *
 * A file may hold several certificates (a chain, a CA bundle): its value is the earliest
 * expiry among them, the first one that can break a connection. The worker reads these
 * files once, at start-up, and keeps what it read until it restarts (no listener or client
 * of the worker reloads a rotated certificate), so the files are read once here too: the
 * gauge says what the running process uses, not what a file holds since. A file that holds
 * no readable certificate gets no series (its client or listener fails at start anyway).
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Gauge, type Registry } from 'prom-client';

export const CERTIFICATE_EXPIRY_METRIC = 'payflow_bridge_certificate_expiry_timestamp_seconds';

/** Which certificate a series describes (the `certificate` label). */
export type CertificateName =
  'public_tls' | 'management_tls' | 'kafka_ca' | 'kafka_client' | 'postgres_ca';

export interface CertificateFile {
  readonly certificate: CertificateName;
  readonly path: string;
}

/** The configuration's certificate files (the variables of the table above). */
export interface CertificateConfig {
  readonly TLS_CERT_FILE?: string | undefined;
  readonly MANAGEMENT_TLS_CERT_FILE?: string | undefined;
  readonly KAFKA_SSL?: boolean | undefined;
  readonly KAFKA_SSL_CA_FILE?: string | undefined;
  readonly KAFKA_SSL_CERT_FILE?: string | undefined;
  readonly DATABASE_SSL_CA_FILE?: string | undefined;
}

/** The certificate files a configuration loads, in the order of the table above. */
export function certificateFiles(config: CertificateConfig): CertificateFile[] {
  const files: [CertificateName, string | undefined][] = [
    ['public_tls', config.TLS_CERT_FILE],
    ['management_tls', config.MANAGEMENT_TLS_CERT_FILE],
    // Without KAFKA_SSL the Kafka files are not used (the configuration refuses them anyway).
    ['kafka_ca', config.KAFKA_SSL === false ? undefined : config.KAFKA_SSL_CA_FILE],
    ['kafka_client', config.KAFKA_SSL === false ? undefined : config.KAFKA_SSL_CERT_FILE],
    ['postgres_ca', config.DATABASE_SSL_CA_FILE],
  ];
  return files.flatMap(([certificate, path]) =>
    path === undefined || path === '' ? [] : [{ certificate, path }],
  );
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The earliest expiry (unix seconds) of the PEM certificates in `pem`; undefined when it
 * holds none that parses. Keys and other PEM blocks in the same file are skipped.
 */
export function earliestExpirySeconds(pem: string): number | undefined {
  let earliest: number | undefined;
  for (const [block] of pem.matchAll(PEM_CERTIFICATE)) {
    let validTo: number;
    try {
      validTo = Date.parse(new X509Certificate(block).validTo);
    } catch {
      continue;
    }
    if (!Number.isFinite(validTo)) continue;
    const seconds = Math.floor(validTo / 1000);
    if (earliest === undefined || seconds < earliest) earliest = seconds;
  }
  return earliest;
}

export interface CertificateExpiry {
  readonly certificate: CertificateName;
  readonly expiresAtSeconds: number;
}

/** Reads each file once; a file that cannot be read or holds no certificate is left out. */
export function readCertificateExpiries(
  files: readonly CertificateFile[],
  read: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): CertificateExpiry[] {
  return files.flatMap(({ certificate, path }) => {
    let pem: string;
    try {
      pem = read(path);
    } catch {
      return [];
    }
    const expiresAtSeconds = earliestExpirySeconds(pem);
    return expiresAtSeconds === undefined ? [] : [{ certificate, expiresAtSeconds }];
  });
}

/** Registers the expiry gauge in `registry` with one series per certificate. */
export class CertificateMetrics {
  readonly gauge: Gauge<'certificate'>;

  constructor(registry: Registry, expiries: readonly CertificateExpiry[]) {
    this.gauge = new Gauge({
      name: CERTIFICATE_EXPIRY_METRIC,
      help: 'When each certificate the worker loaded expires (unix seconds; the earliest of a chain or bundle), by certificate (public_tls, management_tls, kafka_ca, kafka_client, postgres_ca)',
      labelNames: ['certificate'],
      registers: [registry],
    });
    for (const { certificate, expiresAtSeconds } of expiries)
      this.gauge.set({ certificate }, expiresAtSeconds);
  }
}
