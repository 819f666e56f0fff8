/**
 * In front of every console route but sign-in and the assets: a request without a live
 * session goes to the sign-in page (SignInRequired); a POST whose form lacks the session's
 * CSRF token is refused (CsrfRejected, 403). The session found is attached to the request
 * (`sessionOf`).
 */
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ConsoleAuth } from '../sign-in/console-auth.js';
import { sameSecret } from '../sign-in/console-token.js';
import { CsrfRejected, SignInRequired } from './console.errors.js';
import {
  CSRF_FIELD,
  SESSION_COOKIE,
  attachSession,
  cookiesOf,
  formField,
} from './console-request.js';

@Injectable()
export class ConsoleSessionGuard implements CanActivate {
  constructor(@Inject(ConsoleAuth) private readonly auth: ConsoleAuth) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const session = this.auth.sessions.touch(cookiesOf(request).get(SESSION_COOKIE));
    if (session === undefined) {
      throw new SignInRequired(request.method === 'GET' ? request.url : '');
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const sent = formField(request.body, CSRF_FIELD);
      if (sent === '' || !sameSecret(sent, session.csrfToken)) throw new CsrfRejected();
    }
    attachSession(request, session);
    return true;
  }
}
