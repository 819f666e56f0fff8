/**
 * What every console controller is: served on the management port only, behind the
 * session guard (sign-in and CSRF), answering errors as pages. Console-wide in one
 * decorator so that no page can forget one of them:
 *
 *   @Controller('console/dead-letters')
 *   @ConsolePage()
 *   export class DeadLettersController { … }
 *
 * `@ConsolePage({ signedOut: true })` leaves out the guard (sign-in pages, assets). Behind
 * the guard, every POST is an action that only the role `operator` may take, unless its
 * handler says `@OpenToViewers()`.
 */
import { applyDecorators, Header, UseFilters, UseGuards } from '@nestjs/common';
import { ServedOnManagementPort } from '../../management/listener-constraint.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { ConsoleSessionGuard } from '../access/console-session.guard.js';

export function ConsolePage(options: { signedOut?: boolean } = {}): ClassDecorator {
  const guard = options.signedOut === true ? [] : [UseGuards(ConsoleSessionGuard)];
  return applyDecorators(UseFilters(ConsoleExceptionFilter), ...guard, ServedOnManagementPort());
}

/** An HTML page answer (a handler's decorator). */
export const HtmlPage = (): MethodDecorator => Header('content-type', 'text/html; charset=utf-8');
