import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ServedOnManagementPort } from '../listener-constraint.js';
import { MetricsService } from './metrics.service.js';

/** `GET /metrics` on the management port: the Prometheus text format. */
@Controller('metrics')
@ServedOnManagementPort()
export class MetricsController {
  constructor(@Inject(MetricsService) private readonly metrics: MetricsService) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
