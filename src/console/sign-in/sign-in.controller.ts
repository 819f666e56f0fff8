/**
 * Signing in and out. `GET /console/login` shows the ways in that are configured: "Sign in
 * with your organization" (the OpenID provider, oidc.controller.ts) and the token form
 * (operator name, token). `POST /console/login` checks the token in constant time and opens
 * a session (cookie HttpOnly, SameSite=Strict, Secure and `__Host-` over HTTPS); its name
 * is only typed, so the audit marks it unverified. The form carries its own CSRF secret
 * before any session exists (double submit: a cookie and a hidden field that must agree).
 * Failed sign-ins are counted per client and for everyone (SignInThrottle): past either
 * limit, 429, and each try while waiting counts as one more. Wrong tokens are recorded in
 * the audit (`sign_in`, refused). `POST /console/logout` ends the session.
 */
import { Controller, Get, Inject, NotFoundException, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import { clientOf } from '../../management/connection-limiter.js';
import { CONSOLE_PREFIX } from '../console.options.js';
import { ConsoleCookies } from '../access/console-cookies.js';
import { ConsolePage, HtmlPage } from '../page/console-page.decorator.js';
import { OpenToViewers } from '../access/open-to-viewers.js';
import { ConsolePageServices } from '../page/console-page-services.js';
import {
  CSRF_FIELD,
  LOGIN_COOKIE,
  SESSION_COOKIE,
  formField,
  queryParam,
  safeNext,
  sessionOf,
} from '../access/console-request.js';
import { CsrfRejected, SignInThrottled } from '../access/console.errors.js';
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
  /** Whether the token form is offered (CONSOLE_TOKEN set). */
  readonly tokenSignIn: boolean;
  /** The OpenID sign-in's start (CONSOLE_OIDC_* set), with `next`; null when none. */
  readonly oidcHref: string | null;
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
    @Inject(ConsolePageServices) private readonly pages: ConsolePageServices,
    @Inject(ConsoleCookies) private readonly cookies: ConsoleCookies,
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
    const token = this.auth.token;
    if (token === null) throw new NotFoundException();
    const loginSecret = this.cookies.get(request, LOGIN_COOKIE);
    const sent = formField(request.body, CSRF_FIELD);
    if (loginSecret === '' || sent === '' || !sameSecret(sent, loginSecret)) {
      throw new CsrfRejected();
    }
    const wait = this.auth.throttle.waitFor(request.ip);
    if (wait !== undefined) {
      // A try while waiting counts too: a client that keeps guessing keeps waiting.
      this.auth.throttle.failed(request.ip);
      this.logger.warn(
        { client: clientOf(request.ip), scope: wait.scope },
        'console sign-in throttled',
      );
      throw new SignInThrottled(Math.ceil(wait.ms / 1000), wait.scope);
    }
    const next = safeNext(formField(request.body, 'next'));
    const operator = operatorName(formField(request.body, 'operator'));
    if (!token.matches(formField(request.body, 'token'))) {
      this.auth.throttle.failed(request.ip);
      this.logger.warn({ client: clientOf(request.ip) }, 'console sign-in with a wrong token');
      await this.pages.record(
        {
          operator: operator === '' ? '(no name given)' : operator,
          subject: null,
          verified: false,
          clientAddress: request.ip,
        },
        'sign_in',
        null,
        'refused',
        { method: 'token', reason: 'wrong_token' },
      );
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
    // The token says only that the person holds it; the name is theirs to type (unverified).
    const { id, session } = this.auth.sessions.open(
      { operator, subject: null, verified: false, role: 'operator' },
      request.ip,
    );
    this.cookies.set(request, reply, SESSION_COOKIE, id, {
      maxAgeSeconds: this.auth.cookieMaxAgeSeconds,
    });
    this.cookies.clear(request, reply, LOGIN_COOKIE);
    await this.pages.record(session, 'sign_in', null, 'done', {
      method: 'token',
      role: 'operator',
    });
    void reply.code(303).header('location', next);
    return undefined;
  }

  private render(
    request: FastifyRequest,
    reply: FastifyReply,
    model: Pick<LoginModel, 'next' | 'operator' | 'error'>,
  ): string {
    const loginCsrf = this.cookies.get(request, LOGIN_COOKIE) || randomSecret();
    if (this.auth.token !== null) this.cookies.set(request, reply, LOGIN_COOKIE, loginCsrf);
    const oidcHref =
      this.auth.oidc === null
        ? null
        : `${CONSOLE_PREFIX}/oidc/login?next=${encodeURIComponent(model.next)}`;
    return this.pages.render<LoginModel>(
      'sign-in/login',
      { title: 'Sign in', section: null, session: null },
      { ...model, loginCsrf, tokenSignIn: this.auth.token !== null, oidcHref },
    );
  }
}

@Controller('console')
@ConsolePage()
export class SignOutController {
  constructor(
    @Inject(ConsoleAuth) private readonly auth: ConsoleAuth,
    @Inject(ConsolePageServices) private readonly pages: ConsolePageServices,
    @Inject(ConsoleCookies) private readonly cookies: ConsoleCookies,
  ) {}

  @Post('logout')
  @OpenToViewers()
  async signOut(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    const session = sessionOf(request);
    this.auth.sessions.close(this.cookies.get(request, SESSION_COOKIE));
    this.cookies.clear(request, reply, SESSION_COOKIE);
    if (session !== undefined) await this.pages.record(session, 'sign_out', null, 'done');
    void reply.code(303).header('location', `${CONSOLE_PREFIX}/login`);
  }
}
