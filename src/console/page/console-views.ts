/**
 * Renders the console's pages: eta templates (`*.eta` beside each page's controller, under
 * src/console/), HTML-escaped by default, inside one layout (layout/layout.eta) that holds
 * the landmarks, the skip link and the navigation. The templates are read from the folder
 * this file lies in, so the same code finds them from the TypeScript sources (jest) and
 * from dist/ (the build copies them there: scripts/copy-assets.mjs).
 *
 * A page's model is typed by its controller; the layout's by `PageFrame`.
 */
import { fileURLToPath } from 'node:url';
import { Injectable } from '@nestjs/common';
import { Eta } from 'eta';
import { CONSOLE_PREFIX } from '../console.options.js';
import type { ConsoleSession } from '../sign-in/session-store.js';

/** The navigation's sections, in order. */
export const SECTIONS = [
  { id: 'overview', label: 'Overview', href: CONSOLE_PREFIX },
  { id: 'search', label: 'Search', href: `${CONSOLE_PREFIX}/search` },
  { id: 'dead-letters', label: 'Dead letters', href: `${CONSOLE_PREFIX}/dead-letters` },
  { id: 'in-doubt', label: 'In doubt', href: `${CONSOLE_PREFIX}/in-doubt` },
  { id: 'settlements', label: 'Settlements', href: `${CONSOLE_PREFIX}/settlements` },
  { id: 'reconciliation', label: 'Reconciliation', href: `${CONSOLE_PREFIX}/reconciliation` },
] as const;
export type SectionId = (typeof SECTIONS)[number]['id'];

export interface PageFrame {
  /** The page's title (also the document's, after " · payflow-bridge console"). */
  readonly title: string;
  /** The navigation entry to mark current; null on pages outside it (sign-in, errors). */
  readonly section: SectionId | null;
  /** Signed in: who, and the CSRF token for the sign-out form. Null on the sign-in page. */
  readonly session: ConsoleSession | null;
}

/** The folder holding the console's templates and assets (src/console or dist/src/console). */
export const CONSOLE_ROOT = fileURLToPath(new URL('..', import.meta.url));

@Injectable()
export class ConsoleViews {
  private readonly eta = new Eta({
    views: CONSOLE_ROOT,
    autoEscape: true,
    autoTrim: false,
    cache: true,
    defaultExtension: '.eta',
  });

  /**
   * The page `template` (a path under src/console without extension, e.g.
   * `search/search`) rendered with `model` as `it`, inside the layout.
   */
  page<M extends object>(template: string, frame: PageFrame, model: M): string {
    const body = this.eta.render(`/${template}`, {
      ...model,
      frame,
      csrf: frame.session?.csrfToken,
      // Only an operator acts: a viewer's page leaves out every action form and panel.
      canAct: frame.session?.role === 'operator',
    });
    return this.eta.render('/layout/layout', {
      frame,
      body,
      sections: SECTIONS,
      prefix: CONSOLE_PREFIX,
    });
  }
}
