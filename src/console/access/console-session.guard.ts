/**
 * In front of every console route but sign-in and the assets: a request without a live
 * session goes to the sign-in page (SignInRequired); a POST whose form lacks the session's
 * CSRF token is refused (CsrfRejected, 403); a POST from a viewer (read only) is refused
 * (ActionForbidden, 403) and recorded (`action_refused`), unless its handler is
 * `@OpenToViewers()` (sign-out). The session found is attached to the request
 * (`sessionOf`), with the address of this request.
 */
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ConsoleAuth } from '../sign-in/console-auth.js';
import { sameSecret } from '../sign-in/console-token.js';
import type { ConsoleSession } from '../sign-in/session-store.js';
import { ConsoleAudit } from './console-audit.js';
import { ConsoleCookies } from './console-cookies.js';
import { ActionForbidden, CsrfRejected, SignInRequired } from './console.errors.js';
import { OPEN_TO_VIEWERS } from './open-to-viewers.js';
import { CSRF_FIELD, SESSION_COOKIE, attachSession, formField } from './console-request.js';

/** The order a refused action concerned, when its route names one. */
function orderIdOf(request: FastifyRequest): string | null {
  const params = request.params as Record<string, unknown> | undefined;
  const orderId = params?.orderId;
  return typeof orderId === 'string' && orderId.length <= 200 ? orderId : null;
}

@Injectable()
export class ConsoleSessionGuard implements CanActivate {
  constructor(
    @Inject(ConsoleAuth) private readonly auth: ConsoleAuth,
    @Inject(ConsoleCookies) private readonly cookies: ConsoleCookies,
    @Inject(ConsoleAudit) private readonly audit: ConsoleAudit,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const session = this.auth.sessions.touch(this.cookies.get(request, SESSION_COOKIE));
    if (session === undefined) {
      throw new SignInRequired(request.method === 'GET' ? request.url : '');
    }
    session.clientAddress = request.ip;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const sent = formField(request.body, CSRF_FIELD);
      if (sent === '' || !sameSecret(sent, session.csrfToken)) throw new CsrfRejected();
    }
    attachSession(request, session);
    if (request.method === 'GET' || request.method === 'HEAD') return true;
    if (session.role !== 'operator' && !this.openToViewers(context)) {
      await this.refuse(request, session);
    }
    return true;
  }

  private openToViewers(context: ExecutionContext): boolean {
    return this.reflector.get<boolean | undefined>(OPEN_TO_VIEWERS, context.getHandler()) === true;
  }

  /** Records the refused action (nothing else happens) and answers 403. */
  private async refuse(request: FastifyRequest, session: ConsoleSession): Promise<never> {
    await this.audit.record(session, 'action_refused', orderIdOf(request), 'refused', {
      method: request.method,
      route: request.routeOptions.url ?? '',
      role: session.role,
    });
    throw new ActionForbidden(session.role);
  }
}
