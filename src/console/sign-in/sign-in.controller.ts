/**
 * Signing in and out. `GET /console/login` shows the form (operator name, token);
 * `POST /console/login` checks the token in constant time and opens a session (cookie
 * HttpOnly, SameSite=Strict, Secure over TLS). The form carries its own CSRF secret before
 * any session exists (double submit: a cookie and a hidden field that must agree). Wrong
 * tokens are counted per client: after five in a minute it waits (429), and each try while
 * it waits counts as one more. `POST
 * /console/logout` ends the session.
 */
import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_LOGGER } from '../../common/logger.module.js';
import type { AppLogger } from '../../common/logger.js';
import { clientOf } from '../../management/connection-limiter.js';
import { CONSOLE_PREFIX } from '../console.options.js';
import { ConsolePage, HtmlPage } from '../shared/console-page.decorator.js';
import { ConsolePageKit } from '../shared/console-page-kit.js';
import {
  CSRF_FIELD,
  LOGIN_COOKIE,
  SESSION_COOKIE,
  cookiesOf,
  formField,
  queryParam,
  safeNext,
  sessionOf,
  setCookie,
} from '../shared/console-request.js';
import { CsrfRejected, SignInThrottled } from '../shared/console.errors.js';
import { ConsoleAuth } from './console-auth.js';
import { sameSecret } from './console-token.js';
import { randomSecret } from './session-store.js';

/** Longest operator name kept (it is "who" in the audit trail). */
const MAX_OPERATOR_NAME = 80;

export interface LoginModel {
  readonly next: string;
  readonly operator: string;
  readonly error: string | null;
  readonly loginCsrf: string;
}

/** The name as given, trimmed, without control characters; '' when unusable. */
export function operatorName(raw: string): string {
  // eslint-disable-next-line no-control-regex
  const name = raw.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return name.length > MAX_OPERATOR_NAME ? '' : name;
}

@Controller('console')
@ConsolePage({ signedOut: true })
export class SignInController {
  constructor(
    @Inject(ConsoleAuth) private readonly auth: ConsoleAuth,
    @Inject(ConsolePageKit) private readonly kit: ConsolePageKit,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  @Get('login')
  @HtmlPage()
  form(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): string {
    return this.render(request, reply, {
      next: safeNext(queryParam(request, 'next')),
      operator: '',
      error: null,
    });
  }

  @Post('login')
  @HtmlPage()
  async signIn(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string | undefined> {
    const loginSecret = cookiesOf(request).get(LOGIN_COOKIE) ?? '';
    const sent = formField(request.body, CSRF_FIELD);
    if (loginSecret === '' || sent === '' || !sameSecret(sent, loginSecret)) {
      throw new CsrfRejected();
    }
    const wait = this.auth.throttle.waitFor(request.ip);
    if (wait > 0) {
      // A try while waiting counts too: a client that keeps guessing keeps waiting.
      this.auth.throttle.failed(request.ip);
      this.logger.warn({ client: clientOf(request.ip) }, 'console sign-in throttled');
      throw new SignInThrottled(Math.ceil(wait / 1000));
    }
    const next = safeNext(formField(request.body, 'next'));
    const operator = operatorName(formField(request.body, 'operator'));
    const token = formField(request.body, 'token');
    if (!this.auth.token.matches(token)) {
      this.auth.throttle.failed(request.ip);
      this.logger.warn({ client: clientOf(request.ip) }, 'console sign-in with a wrong token');
      void reply.code(401);
      return this.render(request, reply, { next, operator, error: 'That token is not right.' });
    }
    if (operator === '') {
      void reply.code(400);
      return this.render(request, reply, {
        next,
        operator: '',
        error: `Give your name (at most ${MAX_OPERATOR_NAME} characters): it is recorded with what you do.`,
      });
    }
    const { id, session } = this.auth.sessions.open(operator);
    setCookie(request, reply, SESSION_COOKIE, id, { maxAgeSeconds: this.auth.cookieMaxAgeSeconds });
    setCookie(request, reply, LOGIN_COOKIE, '', { maxAgeSeconds: 0 });
    await this.kit.record(session, 'sign_in', null, 'done');
    void reply.code(303).header('location', next);
    return undefined;
  }

  private render(
    request: FastifyRequest,
    reply: FastifyReply,
    model: Omit<LoginModel, 'loginCsrf'>,
  ): string {
    const loginCsrf = cookiesOf(request).get(LOGIN_COOKIE) || randomSecret();
    setCookie(request, reply, LOGIN_COOKIE, loginCsrf);
    return this.kit.render<LoginModel>(
      'sign-in/login',
      { title: 'Sign in', section: null, session: null },
      { ...model, loginCsrf },
    );
  }
}

@Controller('console')
@ConsolePage()
export class SignOutController {
  constructor(
    @Inject(ConsoleAuth) private readonly auth: ConsoleAuth,
    @Inject(ConsolePageKit) private readonly kit: ConsolePageKit,
  ) {}

  @Post('logout')
  async signOut(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    const session = sessionOf(request);
    this.auth.sessions.close(cookiesOf(request).get(SESSION_COOKIE));
    setCookie(request, reply, SESSION_COOKIE, '', { maxAgeSeconds: 0 });
    if (session !== undefined) await this.kit.record(session, 'sign_out', null, 'done');
    void reply.code(303).header('location', `${CONSOLE_PREFIX}/login`);
  }
}
