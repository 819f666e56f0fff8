/**
 * Nest wiring of the Payflow client. The rest of the program injects `PAYFLOW_API` (typed
 * `PayflowApi`); `PayflowClient` is exported too for lifecycle needs. Nest closes the client's
 * connection pool on shutdown (`onApplicationShutdown`, after the order transport drained).
 *
 *   PayflowModule.forRoot(config, logger)
 *   PayflowModule.forRootAsync({ inject: [APP_CONFIG, APP_LOGGER],
 *     useFactory: (config, logger) => ({ options: payflowClientOptionsFromConfig(config), logger }) })
 */
import {
  Module,
  type DynamicModule,
  type FactoryProvider,
  type InjectionToken,
  type ModuleMetadata,
  type OptionalFactoryDependency,
  type Provider,
} from '@nestjs/common';
import type { AppLogger } from '../logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { PAYFLOW_CLIENT_OPTIONS, PAYFLOW_LOGGER, PayflowClient } from './payflow.client.js';
import { PAYFLOW_CALL_TRACER, type PayflowCallTracer } from './payflow-trace.js';
import type { PayflowClientOptions } from './payflow.types.js';

/** Injection token of the `PayflowApi` the rest of the program depends on. */
export const PAYFLOW_API = Symbol('PAYFLOW_API');
const PAYFLOW_MODULE_SETTINGS = Symbol('PAYFLOW_MODULE_SETTINGS');

export interface PayflowModuleSettings {
  readonly options: PayflowClientOptions;
  readonly logger?: AppLogger;
}

export interface PayflowModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  readonly inject?: (InjectionToken | OptionalFactoryDependency)[];
  readonly useFactory: (...args: never[]) => PayflowModuleSettings | Promise<PayflowModuleSettings>;
  /** Register globally (default false). */
  readonly isGlobal?: boolean;
}

/**
 * Client options from the validated configuration (PAYFLOW_* variables). PAYFLOW_DOCUMENT_UPLOAD
 * may be missing from a configuration that never uploads (the CLI's): the client's default
 * (`json`) applies then. PAYFLOW_CLIENT_SECRET_FILE, when the secret came from a file, lets the
 * client read a rotated secret again (the worker's and the CLI's configuration keep it).
 */
export function payflowClientOptionsFromConfig(
  config: Pick<
    AppConfig,
    | 'PAYFLOW_BASE_URL'
    | 'PAYFLOW_PARTNER_BASE_URL'
    | 'PAYFLOW_TOKEN_URL'
    | 'PAYFLOW_CLIENT_ID'
    | 'PAYFLOW_CLIENT_SECRET'
    | 'PAYFLOW_CONNECT_TIMEOUT'
    | 'PAYFLOW_REQUEST_TIMEOUT'
    | 'PAYFLOW_MAX_CONNECTIONS'
  > &
    Partial<Pick<AppConfig, 'PAYFLOW_DOCUMENT_UPLOAD' | 'PAYFLOW_CLIENT_SECRET_FILE'>>,
  extra: Partial<PayflowClientOptions> = {},
): PayflowClientOptions {
  return {
    baseUrl: config.PAYFLOW_BASE_URL,
    partnerBaseUrl: config.PAYFLOW_PARTNER_BASE_URL,
    tokenUrl: config.PAYFLOW_TOKEN_URL,
    clientId: config.PAYFLOW_CLIENT_ID,
    clientSecret: config.PAYFLOW_CLIENT_SECRET,
    ...(config.PAYFLOW_CLIENT_SECRET_FILE === undefined
      ? {}
      : { clientSecretFile: config.PAYFLOW_CLIENT_SECRET_FILE }),
    connectTimeoutMs: config.PAYFLOW_CONNECT_TIMEOUT,
    requestTimeoutMs: config.PAYFLOW_REQUEST_TIMEOUT,
    connections: config.PAYFLOW_MAX_CONNECTIONS,
    ...(config.PAYFLOW_DOCUMENT_UPLOAD === undefined
      ? {}
      : { documentUpload: config.PAYFLOW_DOCUMENT_UPLOAD }),
    ...extra,
  };
}

function clientProviders(settings: Provider): Provider[] {
  const client: FactoryProvider<PayflowClient> = {
    provide: PayflowClient,
    inject: [PAYFLOW_MODULE_SETTINGS, { token: PAYFLOW_CALL_TRACER, optional: true }],
    useFactory: (resolved: PayflowModuleSettings, tracer?: PayflowCallTracer | null) =>
      new PayflowClient(
        tracer === undefined || tracer === null || resolved.options.tracer !== undefined
          ? resolved.options
          : { ...resolved.options, tracer },
        resolved.logger,
      ),
  };
  return [
    settings,
    {
      provide: PAYFLOW_CLIENT_OPTIONS,
      inject: [PAYFLOW_MODULE_SETTINGS],
      useFactory: (resolved: PayflowModuleSettings) => resolved.options,
    },
    {
      provide: PAYFLOW_LOGGER,
      inject: [PAYFLOW_MODULE_SETTINGS],
      useFactory: (resolved: PayflowModuleSettings) => resolved.logger ?? null,
    },
    client,
    { provide: PAYFLOW_API, useExisting: PayflowClient },
  ];
}

@Module({})
export class PayflowModule {
  static forRoot(config: AppConfig, logger?: AppLogger, isGlobal = false): DynamicModule {
    const settings: PayflowModuleSettings = {
      options: payflowClientOptionsFromConfig(config),
      logger,
    };
    return {
      module: PayflowModule,
      global: isGlobal,
      providers: clientProviders({ provide: PAYFLOW_MODULE_SETTINGS, useValue: settings }),
      exports: [PayflowClient, PAYFLOW_API],
    };
  }

  static forRootAsync(options: PayflowModuleAsyncOptions): DynamicModule {
    return {
      module: PayflowModule,
      global: options.isGlobal ?? false,
      imports: options.imports ?? [],
      providers: clientProviders({
        provide: PAYFLOW_MODULE_SETTINGS,
        inject: options.inject ?? [],
        useFactory: options.useFactory as (
          ...args: unknown[]
        ) => PayflowModuleSettings | Promise<PayflowModuleSettings>,
      }),
      exports: [PayflowClient, PAYFLOW_API],
    };
  }
}
