/**
 * The three services every console page's controller uses besides its own reads and use
 * cases: the session the guard found for the request (`session`), the page rendered inside
 * the layout (`render`), and the audit trail of what the person did (`record`). A
 * controller injects this once, parses the request, delegates, and hands the result here
 * to be shown and recorded.
 */
import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type {
  ActionDetails,
  ActionOutcome,
  OperatorActionKind,
  OperatorActionRow,
} from '../../operator/audit/operator-action.repository.js';
import type { ConsoleSession } from '../sign-in/session-store.js';
import { ConsoleAudit, type AuditActor } from '../access/console-audit.js';
import { sessionOf } from '../access/console-request.js';
import { ConsoleViews, type PageFrame } from './console-views.js';

@Injectable()
export class ConsolePageServices {
  constructor(
    @Inject(ConsoleViews) private readonly views: ConsoleViews,
    @Inject(ConsoleAudit) private readonly audit: ConsoleAudit,
  ) {}

  /** The signed-in session of a request the guard let through; a 404 when there is none. */
  session(request: FastifyRequest): ConsoleSession {
    const session = sessionOf(request);
    if (session === undefined) throw new NotFoundException();
    return session;
  }

  /** The page `template` (a path under src/console, e.g. `search/search`) in the layout. */
  render<M extends object>(template: string, frame: PageFrame, model: M): string {
    return this.views.page<M>(template, frame, model);
  }

  /** Records what the signed-in person did (ConsoleAudit: a row and a log line). */
  record(
    session: AuditActor,
    action: OperatorActionKind,
    orderId: string | null,
    outcome: ActionOutcome,
    details?: ActionDetails,
  ): Promise<OperatorActionRow> {
    return this.audit.record(session, action, orderId, outcome, details);
  }
}
