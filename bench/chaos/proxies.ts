/**
 * Two small network pieces of the fault campaign, in the campaign's own process:
 *
 * - PayflowRecorder: an HTTP proxy in front of the sandbox that notes the webhook token of
 *   every POST /api/payments that reaches it, so that a creation left in doubt can be told
 *   apart from one whose request never left the worker. It also times the requests that
 *   Payflow answered only after their worker had given up on them (its connection closed):
 *   the proxy, like a real gateway, still delivers them, so they land late, and a lag past
 *   the workers' late-effect window is Payflow breaking the window's assumption (the
 *   campaign's own process and the sandbox are slow on a loaded machine), not the bridge.
 * - WebhookBalancer: a TCP balancer (TLS passes through) in front of the workers' HTTPS
 *   listeners, as a load balancer would be: Payflow's webhooks reach whichever worker is
 *   alive, whatever worker created the payment.
 */
import {
  request as httpRequest,
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { tokenOfCallback } from '../../testbed/invariants.js';

export class PayflowRecorder {
  /** Webhook tokens of the payment creations that reached Payflow. */
  readonly paymentTokens = new Set<string>();
  requests = 0;
  /**
   * Per request answered after its worker gave up: milliseconds from its arrival here to
   * Payflow's answer (the sandbox applies a call before it answers it).
   */
  readonly answeredAfterGiveUpMs: number[] = [];
  private readonly server: Server;
  private readonly upstream: URL;
  private port = 0;

  private constructor(target: string) {
    this.upstream = new URL(target);
    this.server = createServer((request, response) => this.handle(request, response));
    this.server.keepAliveTimeout = 30_000;
  }

  static async start(target: string): Promise<PayflowRecorder> {
    const recorder = new PayflowRecorder(target);
    await new Promise<void>((resolve) => recorder.server.listen(0, '127.0.0.1', resolve));
    recorder.port = (recorder.server.address() as net.AddressInfo).port;
    return recorder;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const arrived = performance.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      this.requests++;
      if (request.method === 'POST' && (request.url ?? '').split('?')[0] === '/api/payments') {
        try {
          const parsed = JSON.parse(body.toString('utf8')) as { callback?: { url?: string } };
          const token = tokenOfCallback(parsed.callback?.url);
          if (token !== undefined) this.paymentTokens.add(token);
        } catch {
          // not JSON: Payflow answers 4xx
        }
      }
      const forward = httpRequest(
        {
          host: this.upstream.hostname,
          port: this.upstream.port,
          method: request.method,
          path: request.url,
          headers: request.headers,
        },
        (answer) => {
          if (request.socket.destroyed || response.destroyed) {
            this.answeredAfterGiveUpMs.push(Math.round(performance.now() - arrived));
          }
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      // The sandbox reset the connection (a fault): do the same to the worker.
      forward.on('error', () => request.socket.destroy());
      forward.end(body);
    });
  }
}

export class WebhookBalancer {
  connections = 0;
  refused = 0;
  private next = 0;
  private readonly server: net.Server;
  private boundPort = 0;

  /** Forwards each connection to one of `targets()` (ports on 127.0.0.1), round robin. */
  private constructor(private readonly targets: () => readonly number[]) {
    this.server = net.createServer((socket) => this.forward(socket));
  }

  static async start(targets: () => readonly number[]): Promise<WebhookBalancer> {
    const balancer = new WebhookBalancer(targets);
    await new Promise<void>((resolve) => balancer.server.listen(0, '127.0.0.1', resolve));
    balancer.boundPort = (balancer.server.address() as net.AddressInfo).port;
    return balancer;
  }

  get port(): number {
    return this.boundPort;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private forward(socket: net.Socket): void {
    socket.on('error', () => undefined);
    const ports = this.targets();
    if (ports.length === 0) {
      this.refused++;
      socket.destroy();
      return;
    }
    this.connections++;
    const target = ports[this.next++ % ports.length] as number;
    const upstream = net.connect(target, '127.0.0.1');
    upstream.on('error', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  }
}
