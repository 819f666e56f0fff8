/**
 * A certificate authority made for one test run, and certificates it signs: servers (a
 * Kafka broker, a Postgres server) for localhost and 127.0.0.1, and clients (mutual TLS)
 * by common name. EC P-256 keys in PKCS#8 PEM, which Node, Postgres and Kafka's PEM key
 * stores all read. A second, unrelated CA (`otherCa`) gives the "untrusted CA" cases.
 */
import { generate } from 'selfsigned';

export interface Pem {
  /** PKCS#8 private key. */
  readonly key: string;
  readonly cert: string;
}

export interface IssueOptions {
  readonly commonName: string;
  /** Server: host names and IP addresses it answers for. Default localhost and 127.0.0.1. */
  readonly hosts?: readonly string[];
  /** server (default) or client (mutual TLS). */
  readonly usage?: 'server' | 'client';
}

const IP = /^\d{1,3}(\.\d{1,3}){3}$/;

/** A new certificate authority. */
export async function makeCertificateAuthority(
  commonName = 'payflow-bridge test CA',
): Promise<Pem> {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/** A certificate signed by `ca`. */
export async function issueCertificate(ca: Pem, options: IssueOptions): Promise<Pem> {
  const usage = options.usage ?? 'server';
  const hosts = options.hosts ?? ['localhost', '127.0.0.1'];
  const pems = await generate([{ name: 'commonName', value: options.commonName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    ca,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      usage === 'server'
        ? { name: 'extKeyUsage', serverAuth: true }
        : { name: 'extKeyUsage', clientAuth: true },
      ...(usage === 'server'
        ? [
            {
              name: 'subjectAltName' as const,
              altNames: hosts.map((host) =>
                IP.test(host) ? { type: 7 as const, ip: host } : { type: 2 as const, value: host },
              ),
            },
          ]
        : []),
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

export interface TestPki {
  readonly ca: Pem;
  /** A CA that signed nothing here: trusting it is trusting the wrong CA. */
  readonly otherCa: Pem;
  server(commonName: string, hosts?: readonly string[]): Promise<Pem>;
  client(commonName: string): Promise<Pem>;
}

/** A CA, an unrelated CA, and issuing helpers. */
export async function makeTestPki(): Promise<TestPki> {
  const [ca, otherCa] = await Promise.all([
    makeCertificateAuthority(),
    makeCertificateAuthority('an unrelated CA'),
  ]);
  return {
    ca,
    otherCa,
    server: (commonName, hosts) =>
      issueCertificate(ca, { commonName, ...(hosts ? { hosts } : {}), usage: 'server' }),
    client: (commonName) => issueCertificate(ca, { commonName, usage: 'client' }),
  };
}
