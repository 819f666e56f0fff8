/**
 * Headers on every console answer (management listener, /console…): a Content Security
 * Policy that allows only the console's own stylesheet and script (no inline code, no
 * other origin, no framing), no sniffing, no referrer, no caching of pages that show
 * orders (the assets say otherwise for themselves), and HSTS where the browser sees HTTPS.
 */
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { isManagementRequest } from '../management/listener-constraint.js';
import { CONSOLE_PREFIX } from './console.options.js';
import { ConsoleCookies } from './access/console-cookies.js';

/** Strict-Transport-Security over HTTPS: a year (no preload: the host is the operator's). */
export const HSTS = 'max-age=31536000';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

function isConsoleUrl(url: string): boolean {
  return (
    url === CONSOLE_PREFIX ||
    url.startsWith(`${CONSOLE_PREFIX}/`) ||
    url.startsWith(`${CONSOLE_PREFIX}?`)
  );
}

@Injectable()
export class ConsoleHttpIntegration implements OnModuleInit {
  constructor(
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    @Inject(ConsoleCookies) private readonly cookies: ConsoleCookies,
  ) {}

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter as HttpAdapterHost['httpAdapter'] | undefined;
    if (adapter === undefined || adapter.getType() !== 'fastify') return;
    const fastify = adapter.getInstance<FastifyInstance>();
    fastify.addHook('onSend', (request, reply, payload, done) => {
      if (isManagementRequest(request.raw) && isConsoleUrl(request.url)) {
        void reply.header('content-security-policy', CONSOLE_CSP);
        void reply.header('x-content-type-options', 'nosniff');
        void reply.header('referrer-policy', 'no-referrer');
        void reply.header('x-frame-options', 'DENY');
        if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
        // Over HTTPS (ours, or the TLS proxy's in front): the browser keeps to HTTPS for a year.
        if (this.cookies.https(request)) {
          void reply.header('strict-transport-security', HSTS);
        }
      }
      done(null, payload);
    });
  }
}
