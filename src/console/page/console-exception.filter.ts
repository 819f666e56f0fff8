/**
 * How the console answers what went wrong, in HTML: to the sign-in page when signed out
 * (303), 403 for a form without its CSRF token and for a viewer's action, 429 with
 * Retry-After for a throttled sign-in, 403/401/502 for an OpenID sign-in that opened no
 * session (no role; refused; provider unreachable), the status of Nest's HTTP exceptions
 * (404…), and 500 for anything else (logged, without its message on the page).
 */
import {
  Catch,
  HttpException,
  Inject,
  Injectable,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import { CONSOLE_PREFIX } from '../console.options.js';
import type {
  OidcFailureReason,
  OidcSignInFailed,
  SignInThrottled,
} from '../access/console.errors.js';
import { sessionOf } from '../access/console-request.js';
import { ConsoleViews } from './console-views.js';

/** What the person is told when the provider's sign-in did not open a session. */
function oidcFailureText(reason: OidcFailureReason | undefined): string {
  switch (reason) {
    case 'no_role':
      return 'Your organization’s sign-in knows you, but gives you no role in this console (viewer or operator). Ask your administrator for one.';
    case 'provider_unreachable':
      return 'Your organization’s sign-in could not be reached. Try again in a moment.';
    case 'provider_error':
      return 'Your organization’s sign-in did not sign you in.';
    case 'no_pending_sign_in':
    case 'bad_callback':
    case 'token_rejected':
    case undefined:
      return 'The sign-in could not be confirmed. Start again from the sign-in page.';
  }
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code: unknown = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

@Catch()
@Injectable()
export class ConsoleExceptionFilter implements ExceptionFilter {
  constructor(
    @Inject(ConsoleViews) private readonly views: ConsoleViews,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    switch (codeOf(error)) {
      case 'CONSOLE.SIGN_IN_REQUIRED': {
        const next = (error as { next?: string }).next ?? '';
        const query = next === '' ? '' : `?next=${encodeURIComponent(next)}`;
        void reply.code(303).header('location', `${CONSOLE_PREFIX}/login${query}`).send();
        return;
      }
      case 'CONSOLE.CSRF_REJECTED':
        this.answer(request, reply, 403, 'Refused', [
          'This form was not sent by your console session (its CSRF token is missing or wrong).',
          'Open the page again and repeat the action.',
        ]);
        return;
      case 'CONSOLE.SIGN_IN_THROTTLED': {
        const { retryAfterSeconds, scope } = error as Partial<SignInThrottled>;
        const seconds = retryAfterSeconds ?? 60;
        void reply.header('retry-after', String(seconds));
        this.answer(request, reply, 429, 'Too many failed sign-ins', [
          scope === 'everyone'
            ? `Too many failed sign-ins reached the console from all addresses together. Try again in ${seconds} seconds.`
            : `Too many wrong tokens came from your address. Try again in ${seconds} seconds.`,
        ]);
        return;
      }
      case 'CONSOLE.ACTION_FORBIDDEN':
        this.answer(request, reply, 403, 'Not allowed', [
          'Your role is viewer: you may read everything here, but not act. Nothing was changed.',
          'Ask for the role operator in your organization’s sign-in to replay, resolve, pull or forget.',
        ]);
        return;
      case 'CONSOLE.OIDC_SIGN_IN_FAILED': {
        const failure = error as Partial<OidcSignInFailed>;
        this.answer(request, reply, failure.status ?? 401, 'Not signed in', [
          oidcFailureText(failure.reason),
        ]);
        return;
      }
      case undefined:
      default:
        break;
    }
    if (error instanceof HttpException || isHttpException(error)) {
      const status = (error as HttpException).getStatus();
      this.answer(request, reply, status, status === 404 ? 'Not found' : 'Not possible', [
        status === 404 ? 'There is nothing at this address.' : (error as Error).message,
      ]);
      return;
    }
    this.logger.error(
      { err: error, url: request.routeOptions.url, method: request.method },
      'console request failed',
    );
    this.answer(request, reply, 500, 'Something went wrong', [
      'The console could not answer. The error is in the worker’s log.',
    ]);
  }

  private answer(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    title: string,
    lines: readonly string[],
  ): void {
    const html = this.views.page(
      'page/message',
      { title, section: null, session: sessionOf(request) ?? null },
      { lines, status },
    );
    void reply.code(status).type('text/html; charset=utf-8').send(html);
  }
}

/** Duck-typed: an HttpException of another realm (jest's VM modules) is one too. */
function isHttpException(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { getStatus?: unknown }).getStatus === 'function'
  );
}
