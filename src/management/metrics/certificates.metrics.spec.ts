import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { generate } from 'selfsigned';
import {
  CERTIFICATE_EXPIRY_METRIC,
  CertificateMetrics,
  certificateFiles,
  earliestExpirySeconds,
  readCertificateExpiries,
} from './certificates.metrics.js';

/** A PEM certificate and its key that expire at `notAfter` (whole seconds). */
async function certificate(notAfter: Date): Promise<{ cert: string; key: string }> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(notAfter.getTime() - 86_400_000),
    notAfterDate: notAfter,
  });
  return { cert: pems.cert, key: pems.private };
}

const IN_TEN_DAYS = new Date(Math.floor(Date.now() / 1000 + 10 * 86_400) * 1000);
const IN_A_YEAR = new Date(Math.floor(Date.now() / 1000 + 365 * 86_400) * 1000);

describe('certificateFiles', () => {
  it('names every certificate file the configuration loads, and nothing else', () => {
    expect(
      certificateFiles({
        TLS_CERT_FILE: '/run/secrets/public.crt',
        MANAGEMENT_TLS_CERT_FILE: '/run/secrets/management.crt',
        KAFKA_SSL: true,
        KAFKA_SSL_CA_FILE: '/run/secrets/kafka-ca.pem',
        KAFKA_SSL_CERT_FILE: '/run/secrets/kafka-client.crt',
        DATABASE_SSL_CA_FILE: '/run/secrets/postgres-ca.pem',
      }),
    ).toEqual([
      { certificate: 'public_tls', path: '/run/secrets/public.crt' },
      { certificate: 'management_tls', path: '/run/secrets/management.crt' },
      { certificate: 'kafka_ca', path: '/run/secrets/kafka-ca.pem' },
      { certificate: 'kafka_client', path: '/run/secrets/kafka-client.crt' },
      { certificate: 'postgres_ca', path: '/run/secrets/postgres-ca.pem' },
    ]);
  });

  it('leaves out what is unset, and the Kafka files without KAFKA_SSL', () => {
    expect(certificateFiles({})).toEqual([]);
    expect(
      certificateFiles({
        KAFKA_SSL: false,
        KAFKA_SSL_CA_FILE: '/ca.pem',
        DATABASE_SSL_CA_FILE: '/pg.pem',
      }),
    ).toEqual([{ certificate: 'postgres_ca', path: '/pg.pem' }]);
  });
});

describe('earliestExpirySeconds', () => {
  it("reads a certificate's notAfter as unix seconds", async () => {
    const { cert } = await certificate(IN_TEN_DAYS);
    expect(earliestExpirySeconds(cert)).toBe(IN_TEN_DAYS.getTime() / 1000);
  });

  it('takes the earliest of a chain or bundle, whatever its place, and skips keys', async () => {
    const later = await certificate(IN_A_YEAR);
    const sooner = await certificate(IN_TEN_DAYS);
    const bundle = `${later.cert}\n${later.key}\n${sooner.cert}`;
    expect(earliestExpirySeconds(bundle)).toBe(IN_TEN_DAYS.getTime() / 1000);
  });

  it('gives nothing for a file without a certificate that parses', async () => {
    const { key } = await certificate(IN_A_YEAR);
    expect(earliestExpirySeconds(key)).toBeUndefined();
    expect(earliestExpirySeconds('')).toBeUndefined();
    expect(
      earliestExpirySeconds(
        '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----',
      ),
    ).toBeUndefined();
  });
});

describe('readCertificateExpiries and the gauge', () => {
  it('sets one series per readable certificate, labelled by certificate only', async () => {
    const files = new Map([
      ['/m.crt', (await certificate(IN_TEN_DAYS)).cert],
      ['/ca.pem', (await certificate(IN_A_YEAR)).cert],
    ]);
    const read = (path: string): string => {
      const text = files.get(path);
      if (text === undefined) throw new Error(`ENOENT: ${path}`);
      return text;
    };
    const expiries = readCertificateExpiries(
      [
        { certificate: 'management_tls', path: '/m.crt' },
        { certificate: 'postgres_ca', path: '/ca.pem' },
        { certificate: 'kafka_client', path: '/missing.crt' },
      ],
      read,
    );
    expect(expiries).toEqual([
      { certificate: 'management_tls', expiresAtSeconds: IN_TEN_DAYS.getTime() / 1000 },
      { certificate: 'postgres_ca', expiresAtSeconds: IN_A_YEAR.getTime() / 1000 },
    ]);

    const registry = new Registry();
    new CertificateMetrics(registry, expiries);
    const text = await registry.metrics();
    expect(text).toContain(
      `${CERTIFICATE_EXPIRY_METRIC}{certificate="management_tls"} ${IN_TEN_DAYS.getTime() / 1000}`,
    );
    expect(text).toContain(
      `${CERTIFICATE_EXPIRY_METRIC}{certificate="postgres_ca"} ${IN_A_YEAR.getTime() / 1000}`,
    );
    expect(text).not.toContain('certificate="kafka_client"');
    expect(text).not.toContain('/m.crt');
  });
});
