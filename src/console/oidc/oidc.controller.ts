/**
 * Signing in through the organization's OpenID provider (CONTRACT §10):
 *
 * - `GET /console/oidc/login?next=` starts the authorization code flow with PKCE: a fresh
 *   state, nonce and verifier kept in the worker's memory under a random id whose cookie
 *   (`pfb_console_oidc`, SameSite=Lax so that the provider's redirect back carries it)
 *   binds the sign-in to this browser; 303 to the provider.
 * - `GET /console/oidc/callback` takes that sign-in (once), lets openid-client check the
 *   answer and the ID token (state, nonce, PKCE, issuer, audience, expiry, signature against
 *   the provider's JWKS), reads the role from the roles claim, and opens a session named by
 *   the provider's subject and display name (verified). No `viewer` or `operator` role: 403,
 *   no session. Every failure is recorded (`sign_in`, refused, with its reason), counted by
 *   the sign-in throttle, and logged with the client only.
 *
 * The callback answers with a page that moves on to the console by itself: a session cookie
 * that is SameSite=Strict is not sent on the provider's cross-site redirect chain, but it is
 * on a navigation this page starts.
 */
import { Controller, Get, Inject, NotFoundException, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import { clientOf } from '../../management/connection-limiter.js';
import { OIDC_CALLBACK_PATH } from '../console.options.js';
import { ConsoleCookies } from '../access/console-cookies.js';
import { ConsolePage, HtmlPage } from '../page/console-page.decorator.js';
import { ConsolePageServices } from '../page/console-page-services.js';
import { OIDC_COOKIE, SESSION_COOKIE, queryParam, safeNext } from '../access/console-request.js';
import { OidcSignInFailed, SignInThrottled } from '../access/console.errors.js';
import { ConsoleAuth } from '../sign-in/console-auth.js';
import type { ConsoleOidcClient } from './oidc-client.js';

/** The authorization response, as the provider sends it back (RFC 6749 §4.1.2). */
export const callbackQuery = z.union([
  z.object({ code: z.string().min(1).max(4096), state: z.string().min(1).max(1024) }),
  z.object({ error: z.string().min(1).max(256), state: z.string().max(1024).optional() }),
]);

/** A Host header we may build the redirect URI from: a host name or address and a port. */
const HOST = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;

export interface ContinueModel {
  readonly next: string;
}

@Controller('console/oidc')
@ConsolePage({ signedOut: true })
export class OidcController {
  constructor(
    @Inject(ConsoleAuth) private readonly auth: ConsoleAuth,
    @Inject(ConsolePageServices) private readonly pages: ConsolePageServices,
    @Inject(ConsoleCookies) private readonly cookies: ConsoleCookies,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  @Get('login')
  async start(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    const client = this.client();
    this.checkThrottle(request);
    const { url, challenge } = await client.start(this.redirectUri(request));
    const id = this.auth.pendingOidc.add(challenge, safeNext(queryParam(request, 'next')));
    this.cookies.set(request, reply, OIDC_COOKIE, id, {
      sameSite: 'Lax',
      maxAgeSeconds: 15 * 60,
    });
    void reply.code(303).header('location', url.href);
  }

  @Get('callback')
  @HtmlPage()
  async callback(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const client = this.client();
    this.checkThrottle(request);
    const pendingId = this.cookies.get(request, OIDC_COOKIE);
    this.cookies.clear(request, reply, OIDC_COOKIE);
    try {
      if (!callbackQuery.safeParse(request.query).success) {
        throw new OidcSignInFailed('bad_callback');
      }
      const pending = this.auth.pendingOidc.take(pendingId);
      if (pending === undefined) throw new OidcSignInFailed('no_pending_sign_in');
      const identity = await client.finish(this.queryOf(request), pending.challenge);
      const { id, session } = this.auth.sessions.open(identity, request.ip);
      this.cookies.set(request, reply, SESSION_COOKIE, id, {
        maxAgeSeconds: this.auth.cookieMaxAgeSeconds,
      });
      await this.pages.record(session, 'sign_in', null, 'done', {
        method: 'oidc',
        role: session.role,
      });
      return this.pages.render<ContinueModel>(
        'oidc/continue',
        { title: 'Signed in', section: null, session: null },
        { next: pending.next },
      );
    } catch (error) {
      if (error instanceof OidcSignInFailed) await this.failed(request, error);
      throw error;
    }
  }

  private client(): ConsoleOidcClient {
    if (this.auth.oidc === null) throw new NotFoundException();
    return this.auth.oidc;
  }

  private checkThrottle(request: FastifyRequest): void {
    const wait = this.auth.throttle.waitFor(request.ip);
    if (wait === undefined) return;
    this.auth.throttle.failed(request.ip);
    this.logger.warn(
      { client: clientOf(request.ip), scope: wait.scope },
      'console sign-in throttled',
    );
    throw new SignInThrottled(Math.ceil(wait.ms / 1000), wait.scope);
  }

  /** A failed sign-in: counted, logged without the person, recorded with them when known. */
  private async failed(request: FastifyRequest, error: OidcSignInFailed): Promise<void> {
    this.auth.throttle.failed(request.ip);
    this.logger.warn(
      { client: clientOf(request.ip), reason: error.reason, code: error.code },
      'console OpenID sign-in refused',
    );
    await this.pages.record(
      {
        operator: error.identity?.name ?? '(unknown)',
        subject: error.identity?.subject ?? null,
        verified: error.identity !== null,
        clientAddress: request.ip,
      },
      'sign_in',
      null,
      'refused',
      { method: 'oidc', reason: error.reason },
    );
  }

  /** The callback URL the browser was sent to: our redirect URI, from the request's Host. */
  private redirectUri(request: FastifyRequest): string {
    const host = request.headers.host ?? '';
    if (!HOST.test(host)) throw new NotFoundException();
    const scheme = this.cookies.https(request) ? 'https' : 'http';
    return `${scheme}://${host}${OIDC_CALLBACK_PATH}`;
  }

  /** The callback's query exactly as received (openid-client reads every parameter). */
  private queryOf(request: FastifyRequest): URLSearchParams {
    const at = request.url.indexOf('?');
    return new URLSearchParams(at < 0 ? '' : request.url.slice(at + 1));
  }
}
