/**
 * The management listener (MANAGEMENT_PORT on MANAGEMENT_HOST): `/metrics`, `/health/live`,
 * `/health/ready` and whatever else is marked `@ServedOnManagementPort()`, for the
 * orchestrator's probes, Prometheus and the people on call, on the private network.
 *
 * Plain HTTP by default: it is never published (the container exposes it to its own network
 * only), and the probes and Prometheus's scrapers speak plain HTTP to a pod without trouble.
 * With MANAGEMENT_TLS_CERT_FILE and MANAGEMENT_TLS_KEY_FILE it speaks HTTPS instead (TLS 1.2
 * at least): the console's sign-in and session then never cross the network in clear. The
 * files are read once, at start-up (docs/security.md, "Rotating each secret").
 *
 * A second Node server in front of the application's one fastify instance (the "multiple
 * servers" recipe of Nest's documentation, with fastify's public `routing` handler): one DI
 * container, one set of hooks; each request is marked as coming through here, and the
 * router's `listener` constraint (listener-constraint.ts) serves it the management routes
 * only. The application must be initialised (listening) before requests arrive.
 */
import { readFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { fileErrorCode } from '../errors/file-error.js';
import { ConfigError, type AppConfig } from '../config/app-config.js';
import { markManagementRequest } from './listener-constraint.js';

/** The management port's certificate chain and key (PEM), or null for plain HTTP. */
export type ManagementTls = { readonly cert: Buffer; readonly key: Buffer } | null;

/**
 * Reads MANAGEMENT_TLS_CERT_FILE and MANAGEMENT_TLS_KEY_FILE (set together: the
 * configuration checks that) and checks that they make a TLS context. A file that cannot be
 * read is a ConfigError naming the variable and the error code, never a file's content;
 * files that are not a PEM certificate and its key name both variables.
 */
export function managementTlsOptions(
  config: Pick<AppConfig, 'MANAGEMENT_TLS_CERT_FILE' | 'MANAGEMENT_TLS_KEY_FILE'>,
  readFile: (path: string) => Buffer = (path) => readFileSync(path),
): ManagementTls {
  const { MANAGEMENT_TLS_CERT_FILE: certFile, MANAGEMENT_TLS_KEY_FILE: keyFile } = config;
  if (certFile === undefined || keyFile === undefined) return null;
  const read = (variable: string, path: string): Buffer => {
    try {
      return readFile(path);
    } catch (error) {
      throw new ConfigError(variable, `names a file that cannot be read (${fileErrorCode(error)})`);
    }
  };
  const tls = {
    cert: read('MANAGEMENT_TLS_CERT_FILE', certFile),
    key: read('MANAGEMENT_TLS_KEY_FILE', keyFile),
  };
  try {
    createSecureContext(tls);
  } catch (error) {
    throw notATlsPair(error);
  }
  return tls;
}

function notATlsPair(error: unknown): ConfigError {
  return new ConfigError(
    'MANAGEMENT_TLS_CERT_FILE and MANAGEMENT_TLS_KEY_FILE',
    `do not make a TLS certificate and key (${fileErrorCode(error)})`,
  );
}

export class ManagementListener {
  private constructor(
    private readonly server: Server,
    /** The listener's port (the one the system chose when MANAGEMENT_PORT is 0). */
    readonly port: number,
    /** Base URL this process reaches it at. */
    readonly url: string,
  ) {}

  /**
   * Listens on `port` and `host` and hands every request to `routing` (fastify's); over
   * TLS when `tls` is given. A certificate and key that do not make a TLS context (not PEM,
   * not a pair) are a ConfigError naming the variables.
   */
  static async start(
    routing: RequestListener,
    port: number,
    host: string,
    tls: ManagementTls = null,
  ): Promise<ManagementListener> {
    const handler: RequestListener = (request, response) => {
      markManagementRequest(request);
      routing(request, response);
    };
    let server: Server;
    try {
      server =
        tls === null
          ? createServer(handler)
          : createHttpsServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' }, handler);
    } catch (error) {
      throw notATlsPair(error);
    }
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const bound = (server.address() as AddressInfo).port;
    return new ManagementListener(
      server,
      bound,
      localUrl(tls === null ? 'http' : 'https', host, bound),
    );
  }

  /** Stops accepting and closes every connection (the application has closed before). */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/** The URL this process reaches a listener bound to `host` at (wildcards: the loopback). */
export function localUrl(scheme: 'http' | 'https', host: string, port: number): string {
  if (host === '' || host === '0.0.0.0' || host === '::') return `${scheme}://127.0.0.1:${port}`;
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
