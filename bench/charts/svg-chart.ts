/**
 * Benchmark figures as pictures (issue 21 §5): a vega-lite spec compiled to vega and rendered
 * to SVG in this process (vega's headless view, renderer 'none': no browser, no canvas).
 *
 * One chart shape for every bench: a row of panels, one per figure, each a bar per scenario
 * (coloured by program or variant) with a tick for the range of the runs when there were
 * several, and the target as a dashed rule when the figure has one.
 */
import { writeFile } from 'node:fs/promises';
import * as vega from 'vega';
import * as vl from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';

/** One bar: a figure of one scenario (the median when several runs), with its range. */
export interface ChartBar {
  /** Panel: the figure, with its unit ("orders/s", "paced p99 ms"). */
  readonly figure: string;
  /** Bars within a panel, in this order. */
  readonly scenario: string;
  /** Colour: who or what ran (bridge, reference; default heap, capped heap). */
  readonly series: string;
  readonly value: number;
  readonly min?: number;
  readonly max?: number;
  /** A target for this figure (drawn once per panel). */
  readonly target?: number;
}

export interface ChartOptions {
  readonly title: string;
  readonly subtitle?: string;
  /** Scenario order on the x axis (default: first appearance). */
  readonly scenarios?: readonly string[];
  /** Series order and colours (default: first appearance, vega's palette). */
  readonly series?: readonly { readonly name: string; readonly color: string }[];
  /** Panels per row (default 3). */
  readonly columns?: number;
}

/** The vega-lite spec of `bars` (exported for a test or another renderer). */
export function chartSpec(bars: readonly ChartBar[], options: ChartOptions): TopLevelSpec {
  const scenarios = options.scenarios ?? [...new Set(bars.map((bar) => bar.scenario))];
  const figures = [...new Set(bars.map((bar) => bar.figure))];
  const seriesOrder = options.series?.map((series) => series.name) ?? [
    ...new Set(bars.map((bar) => bar.series)),
  ];
  const colour =
    options.series === undefined
      ? {}
      : {
          scale: {
            domain: options.series.map((series) => series.name),
            range: options.series.map((series) => series.color),
          },
        };
  const y = { field: 'value', type: 'quantitative' as const, title: null };
  const xOffset = { field: 'series', type: 'nominal' as const, sort: seriesOrder };
  const panel = (figure: string) => {
    const own = scenarios.filter((scenario) =>
      bars.some((bar) => bar.figure === figure && bar.scenario === scenario),
    );
    const mine = bars.filter((bar) => bar.figure === figure);
    // Bars of several series side by side within a scenario, when a scenario has several.
    const perScenario = Math.max(
      ...own.map((scenario) => mine.filter((bar) => bar.scenario === scenario).length),
    );
    const offset = perScenario > 1 ? { xOffset } : {};
    const x = {
      field: 'scenario',
      type: 'nominal' as const,
      sort: own,
      title: null,
      axis: { labelAngle: -30, labelLimit: 240 },
    };
    return {
      title: figure,
      width: Math.max(150, own.length * 30 * perScenario),
      height: 200,
      transform: [{ filter: { field: 'figure', equal: figure } }],
      layer: [
        {
          mark: { type: 'bar' as const, tooltip: true },
          encoding: {
            x,
            ...offset,
            y,
            color: { field: 'series', type: 'nominal' as const, title: null, ...colour },
          },
        },
        {
          mark: { type: 'rule' as const, color: '#333', strokeWidth: 1.5 },
          encoding: {
            x,
            ...offset,
            y: { field: 'min', type: 'quantitative' as const },
            y2: { field: 'max' },
          },
        },
        {
          mark: { type: 'text' as const, dy: -6, fontSize: 9, color: '#333' },
          transform: [{ calculate: 'max(datum.value, datum.max || 0)', as: 'top' }],
          encoding: {
            x,
            ...offset,
            y: { field: 'top', type: 'quantitative' as const },
            text: { field: 'value', type: 'quantitative' as const, format: '~r' },
          },
        },
        {
          mark: { type: 'rule' as const, color: '#c0392b', strokeDash: [5, 3], strokeWidth: 1.5 },
          transform: [{ filter: 'isValid(datum.target)' }],
          encoding: {
            y: { aggregate: 'max' as const, field: 'target', type: 'quantitative' as const },
          },
        },
      ],
    };
  };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: options.title,
      anchor: 'start',
      ...(options.subtitle === undefined ? {} : { subtitle: options.subtitle }),
    },
    data: { values: bars.map((bar) => ({ ...bar })) },
    columns: options.columns ?? 3,
    concat: figures.map(panel),
    config: {
      font: 'Helvetica, Arial, sans-serif',
      legend: { orient: 'top' },
      title: { fontSize: 13 },
      background: 'white',
    },
  };
}

/** The SVG text of `bars`. */
export async function chartSvg(bars: readonly ChartBar[], options: ChartOptions): Promise<string> {
  const compiled = vl.compile(chartSpec(bars, options)).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Renders `bars` and writes the SVG to `path`. */
export async function writeChart(
  path: string,
  bars: readonly ChartBar[],
  options: ChartOptions,
): Promise<void> {
  await writeFile(path, await chartSvg(bars, options));
}
