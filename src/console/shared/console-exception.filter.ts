/**
 * How the console answers what went wrong, in HTML: to the sign-in page when signed out
 * (303), 403 for a form without its CSRF token, 429 with Retry-After for a throttled
 * sign-in, the status of Nest's HTTP exceptions (404…), and 500 for anything else (logged,
 * without its message on the page).
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
import { APP_LOGGER } from '../../common/logger.module.js';
import type { AppLogger } from '../../common/logger.js';
import { CONSOLE_PREFIX } from '../console.options.js';
import { sessionOf } from './console-request.js';
import { ConsoleViews } from './console-views.js';

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
        const seconds = (error as { retryAfterSeconds?: number }).retryAfterSeconds ?? 60;
        void reply.header('retry-after', String(seconds));
        this.answer(request, reply, 429, 'Too many wrong tokens', [
          `Too many wrong tokens came from your address. Try again in ${seconds} seconds.`,
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
      'shared/message',
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
