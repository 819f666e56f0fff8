/**
 * `GET /console`: the overview. Consumer lag, outbox backlog, calls in doubt, dead letters
 * in the last 24 h, webhooks received and refused, the last settlement night, each a
 * number in words with a small inline chart of the last hours (OverviewQuery: counts per
 * hour from the tables, the live gauges sampled once a minute).
 */
import { Controller, Get, Inject, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import {
  OverviewQuery,
  type Overview,
  type Series,
} from '../../../operator/overview/overview.query.js';
import { ConsolePage, HtmlPage } from '../../page/console-page.decorator.js';
import { ConsolePageServices } from '../../page/console-page-services.js';
import { sparkline } from './sparkline.js';

export interface Tile {
  readonly id: string;
  readonly label: string;
  /** The number, in words ("12", "none", "not measured"). */
  readonly value: string;
  /** One line under it. */
  readonly detail: string;
  readonly tone: 'ok' | 'warn' | 'bad' | 'info';
  /** Inline SVG (numbers only). */
  readonly chart: string;
  /** What the chart covers, in words. */
  readonly chartCaption: string;
  readonly href: string | null;
}

export interface OverviewModel {
  readonly tiles: readonly Tile[];
  readonly at: string;
  readonly sampledSince: string | null;
}

const chartOf = (series: Series): string => sparkline(series.points.map((point) => point.value));

function caption(series: Series, sampledSince: string | null): string {
  if (series.step === 'hour') return 'per hour, last 24 h';
  if (series.points.length < 2) return 'sampled every minute; too few samples yet';
  const since = (sampledSince ?? series.points[0]?.at ?? '').replace('T', ' ').slice(11, 16);
  return `sampled every minute since ${since} UTC`;
}

const count = (value: number | null, unit: string): string =>
  value === null ? 'not measured' : `${value} ${unit}`;

function tiles(o: Overview): Tile[] {
  const night = o.settlements.lastPulled;
  return [
    {
      id: 'lag',
      label: 'Consumer lag',
      value: count(o.consumerLag.value, 'event(s) behind'),
      detail: 'order events on Kafka not yet taken, all partitions',
      tone: (o.consumerLag.value ?? 0) > 1000 ? 'warn' : 'ok',
      chart: chartOf(o.consumerLag.series),
      chartCaption: caption(o.consumerLag.series, o.sampledSince),
      href: null,
    },
    {
      id: 'outbox',
      label: 'Outbox backlog',
      value: count(o.outboxBacklog.value, 'message(s) waiting'),
      detail:
        o.outboxBacklog.oldestPendingSeconds === null
          ? 'nothing waits to be published'
          : `the oldest has waited ${Math.round(o.outboxBacklog.oldestPendingSeconds)} s`,
      tone: (o.outboxBacklog.oldestPendingSeconds ?? 0) > 60 ? 'warn' : 'ok',
      chart: chartOf(o.outboxBacklog.series),
      chartCaption: caption(o.outboxBacklog.series, o.sampledSince),
      href: null,
    },
    {
      id: 'in-doubt',
      label: 'Calls in doubt',
      value: count(o.inDoubt.value, 'call(s)'),
      detail: 'each waits for a person’s verdict',
      tone: (o.inDoubt.value ?? 0) > 0 ? 'bad' : 'ok',
      chart: chartOf(o.inDoubt.series),
      chartCaption: caption(o.inDoubt.series, o.sampledSince),
      href: '/console/in-doubt',
    },
    {
      id: 'dead-letters',
      label: 'Dead letters, last 24 h',
      value: `${o.deadLetters.last24h}`,
      detail: 'order events that could not take effect',
      tone: o.deadLetters.last24h > 0 ? 'warn' : 'ok',
      chart: chartOf(o.deadLetters.series),
      chartCaption: caption(o.deadLetters.series, o.sampledSince),
      href: '/console/dead-letters',
    },
    {
      id: 'webhooks',
      label: 'Webhooks received, last 24 h',
      value: `${o.webhooks.received24h}`,
      detail: 'stored from Payflow (duplicates counted once)',
      tone: 'info',
      chart: chartOf(o.webhooks.receivedSeries),
      chartCaption: caption(o.webhooks.receivedSeries, o.sampledSince),
      href: null,
    },
    {
      id: 'webhooks-refused',
      label: 'Webhooks refused',
      value: count(o.webhooks.refused, ''),
      detail: 'wrong key, malformed or over the rate limit, since sampling began',
      tone: (o.webhooks.refused ?? 0) > 0 ? 'warn' : 'ok',
      chart: chartOf(o.webhooks.refusedSeries),
      chartCaption: caption(o.webhooks.refusedSeries, o.sampledSince),
      href: null,
    },
    {
      id: 'settlements',
      label: 'Last settlement night',
      value: night === null ? 'none pulled yet' : `${night.date} (${night.organizationId})`,
      detail:
        night === null
          ? 'no settlement file was pulled'
          : `${night.state}, pulled ${night.pulledAt?.replace('T', ' ').slice(0, 16) ?? '?'} UTC`,
      tone: night === null ? 'info' : 'ok',
      chart: chartOf(o.settlements.filesSeries),
      chartCaption: 'files stored per hour, last 24 h',
      href: '/console/settlements',
    },
  ];
}

@Controller('console')
@ConsolePage()
export class OverviewController {
  constructor(
    @Inject(OverviewQuery) private readonly overview: OverviewQuery,
    @Inject(ConsolePageServices) private readonly pages: ConsolePageServices,
  ) {}

  @Get()
  @HtmlPage()
  async page(@Req() request: FastifyRequest): Promise<string> {
    const session = this.pages.session(request);
    const overview = await this.overview.overview();
    return this.pages.render<OverviewModel>(
      'operations/overview/overview',
      { title: 'Overview', section: 'overview', session },
      { tiles: tiles(overview), at: overview.at, sampledSince: overview.sampledSince },
    );
  }
}
