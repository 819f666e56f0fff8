/**
 * `Tracing` for the whole worker (global): off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; a
 * test may hand in its own (an SDK exporting to memory). It also gives the Payflow client
 * its call tracer (PAYFLOW_CALL_TRACER), since src/payflow may not import src/tracing. The SDK is flushed at shutdown,
 * after the consumers drained, so the spans of the last events are sent too.
 */
import {
  Global,
  Inject,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { PAYFLOW_CALL_TRACER } from '../payflow/payflow-trace.js';
import { payflowCallTracer } from './payflow-call-tracer.js';
import { Tracing } from './tracing.js';
import { startTracing, type StartedTracing } from './tracing.setup.js';

const STARTED_TRACING = Symbol('STARTED_TRACING');

@Global()
@Module({})
export class TracingModule implements OnApplicationShutdown {
  constructor(@Inject(STARTED_TRACING) private readonly started: StartedTracing) {}

  static forRoot(
    config: Pick<AppConfig, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_SERVICE_NAME'>,
    given?: StartedTracing,
  ): DynamicModule {
    const started =
      given ??
      startTracing({
        otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
        serviceName: config.OTEL_SERVICE_NAME,
      });
    return {
      module: TracingModule,
      providers: [
        { provide: STARTED_TRACING, useValue: started },
        { provide: Tracing, useValue: started.tracing },
        { provide: PAYFLOW_CALL_TRACER, useValue: payflowCallTracer(started.tracing) },
      ],
      exports: [Tracing, PAYFLOW_CALL_TRACER],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.started.shutdown();
  }
}
