/**
 * The console's cookies as the browser sees the console: over HTTPS (the request came over
 * TLS, or CONSOLE_BEHIND_TLS_PROXY says a TLS proxy in front terminated it) every cookie is
 * `Secure` and named `__Host-…`; over plain HTTP (allowed on loopback only) neither.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_OPTIONS, type ConsoleOptions } from '../console.options.js';
import {
  cookieName,
  cookiesOf,
  overTls,
  setCookie,
  type CookieOptions,
} from './console-request.js';

@Injectable()
export class ConsoleCookies {
  private readonly behindTlsProxy: boolean;

  constructor(@Inject(CONSOLE_OPTIONS) options: Pick<ConsoleOptions, 'behindTlsProxy'>) {
    this.behindTlsProxy = options.behindTlsProxy;
  }

  /** Whether the browser reached the console over HTTPS (itself, or through the proxy). */
  https(request: FastifyRequest): boolean {
    return overTls(request) || this.behindTlsProxy;
  }

  /** The value of the console's cookie `name` ('' when absent). */
  get(request: FastifyRequest, name: string): string {
    return cookiesOf(request).get(cookieName(name, this.https(request))) ?? '';
  }

  set(
    request: FastifyRequest,
    reply: FastifyReply,
    name: string,
    value: string,
    options: CookieOptions = {},
  ): void {
    setCookie(reply, this.https(request), name, value, options);
  }

  /** Deletes the console's cookie `name`. */
  clear(request: FastifyRequest, reply: FastifyReply, name: string): void {
    this.set(request, reply, name, '', { maxAgeSeconds: 0 });
  }
}
