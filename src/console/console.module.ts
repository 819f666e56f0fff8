/**
 * The operator console (issue 22; CONTRACT §9, §10): server-rendered pages under `/console`
 * on the management port only, present only when CONSOLE_TOKEN (or CONSOLE_TOKEN_FILE) or
 * the OpenID provider (CONSOLE_OIDC_*) is set. Every controller is a `@ConsolePage()`: `@ServedOnManagementPort()`, the session
 * guard (sign-in, CSRF) and the console's error pages.
 *
 * ConsolePagesModule (global while the console is on) gives every console page what it
 * needs: the options, sign-in state, the views, the audit trail, the guard and the filter.
 * The pages of the operations (dead letters, in doubt, settlements, overview) come in
 * ConsoleOperationsModule.
 */
import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { DatabaseModule } from '../database/database.module.js';
import { OPERATOR_ACTION_ENTITIES } from '../operator/audit/operator-action.entity.js';
import { DeadLetterListQuery } from '../operator/dead-letters/dead-letter-list.query.js';
import { OrderTimelineQuery } from '../operator/order-timeline/order-timeline.query.js';
import { OrderSearchQuery } from '../operator/search/order-search.query.js';
import { PrivacyModule } from '../privacy/privacy.module.js';
import { AssetsController } from './assets/assets.controller.js';
import { ConsoleHttpIntegration } from './console-http.integration.js';
import { consoleEnabled } from '../config/transport-security.js';
import { CONSOLE_OPTIONS, consoleOptions, type ConsoleOverrides } from './console.options.js';
import { OidcController } from './oidc/oidc.controller.js';
import {
  ConsoleOperationsModule,
  type ImportedModule,
} from './operations/console-operations.module.js';
import { ConsoleErasures } from './order/console-erasures.js';
import { OrderController } from './order/order.controller.js';
import { SearchController } from './search/search.controller.js';
import { ConsoleAudit } from './access/console-audit.js';
import { ConsoleCookies } from './access/console-cookies.js';
import { ConsolePageServices } from './page/console-page-services.js';
import { ConsoleExceptionFilter } from './page/console-exception.filter.js';
import { ConsoleSessionGuard } from './access/console-session.guard.js';
import { ConsoleViews } from './page/console-views.js';
import { ConsoleAuth } from './sign-in/console-auth.js';
import { SignInController, SignOutController } from './sign-in/sign-in.controller.js';

const EVERY_PAGE_NEEDS = [
  ConsoleAuth,
  ConsoleCookies,
  ConsoleViews,
  ConsoleAudit,
  ConsolePageServices,
  ConsoleSessionGuard,
  ConsoleExceptionFilter,
];

@Global()
@Module({})
export class ConsolePagesModule {
  static forRoot(config: AppConfig, overrides: ConsoleOverrides): DynamicModule {
    return {
      module: ConsolePagesModule,
      providers: [
        { provide: CONSOLE_OPTIONS, useValue: consoleOptions(config, overrides) },
        ...EVERY_PAGE_NEEDS,
      ],
      exports: [CONSOLE_OPTIONS, ...EVERY_PAGE_NEEDS],
    };
  }
}

@Module({})
export class ConsoleModule {
  /**
   * The console, or nothing at all when no way to sign in is configured. `outbox` is the
   * application's OutboxModule (the object it imports itself): its relay publishes the
   * console's replays and is woken by its pulls.
   */
  static forRoot(
    config: AppConfig,
    outbox: ImportedModule,
    overrides: ConsoleOverrides = {},
  ): DynamicModule {
    if (!consoleEnabled(config)) return { module: ConsoleModule };
    return {
      module: ConsoleModule,
      imports: [
        DatabaseModule.forFeature(OPERATOR_ACTION_ENTITIES),
        ConsolePagesModule.forRoot(config, overrides),
        ConsoleOperationsModule.forRoot(outbox),
        // The order page's "Erase personal data": the erasure of `privacy erase --order`.
        PrivacyModule.forRoot(),
      ],
      controllers: [
        AssetsController,
        SignInController,
        OidcController,
        SignOutController,
        SearchController,
        OrderController,
      ],
      providers: [
        ConsoleHttpIntegration,
        OrderSearchQuery,
        OrderTimelineQuery,
        DeadLetterListQuery,
        ConsoleErasures,
      ],
    };
  }
}
