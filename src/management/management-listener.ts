/**
 * The management listener (MANAGEMENT_PORT on MANAGEMENT_HOST): `/metrics`, `/health/live`,
 * `/health/ready` and whatever else is marked `@ServedOnManagementPort()`, for the
 * orchestrator's probes, Prometheus and the people on call, on the private network.
 *
 * Plain HTTP on purpose: it is never published (the container exposes it to its own network
 * only), the probes and Prometheus's scrapers speak plain HTTP to a pod without trouble, and
 * a certificate here would be one more secret to rotate for no reader that needs it.
 *
 * A second Node server in front of the application's one fastify instance (the "multiple
 * servers" recipe of Nest's documentation, with fastify's public `routing` handler): one DI
 * container, one set of hooks; each request is marked as coming through here, and the
 * router's `listener` constraint (listener-constraint.ts) serves it the management routes
 * only. The application must be initialised (listening) before requests arrive.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { markManagementRequest } from './listener-constraint.js';

export class ManagementListener {
  private constructor(
    private readonly server: Server,
    /** The listener's port (the one the system chose when MANAGEMENT_PORT is 0). */
    readonly port: number,
    /** Base URL this process reaches it at. */
    readonly url: string,
  ) {}

  /** Listens on `port` and `host` and hands every request to `routing` (fastify's). */
  static async start(
    routing: RequestListener,
    port: number,
    host: string,
  ): Promise<ManagementListener> {
    const server = createServer((request, response) => {
      markManagementRequest(request);
      routing(request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const bound = (server.address() as AddressInfo).port;
    return new ManagementListener(server, bound, localUrl('http', host, bound));
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
