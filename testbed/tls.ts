/**
 * A self-signed certificate for localhost and 127.0.0.1 (made with `selfsigned`, EC P-256 so
 * it takes milliseconds): the worker serves HTTPS with it, and the sandbox trusts it as its
 * webhook CA. Used by the tests and the chaos campaign.
 */
import { generate } from 'selfsigned';

export interface TlsFixture {
  key: string;
  cert: string;
  /** The certificate itself: trust it to trust the server. */
  ca: string;
}

let cached: Promise<TlsFixture> | undefined;

/** One self-signed certificate per process (cached). */
export function selfSignedTls(): Promise<TlsFixture> {
  cached ??= generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  }).then((pems) => ({ key: pems.private, cert: pems.cert, ca: pems.cert }));
  return cached;
}
