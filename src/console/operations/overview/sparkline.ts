/**
 * A small inline chart of a series: an SVG polyline scaled to the series' own range (a
 * flat series is a line at the bottom), with the last point marked. Only numbers go into
 * the markup, so it is safe to embed unescaped; the chart is decoration (aria-hidden), the
 * page says the numbers in words.
 */
export interface SparklineOptions {
  readonly width?: number;
  readonly height?: number;
}

const round = (value: number): number => Math.round(value * 10) / 10;

export function sparkline(values: readonly number[], options: SparklineOptions = {}): string {
  const width = options.width ?? 160;
  const height = options.height ?? 36;
  const pad = 3;
  const finite = values.filter((value) => Number.isFinite(value));
  const open = `<svg class="spark" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" aria-hidden="true" focusable="false">`;
  if (finite.length === 0) {
    return `${open}<line x1="${pad}" y1="${height - pad}" x2="${width - pad}" y2="${height - pad}" class="spark-empty"/></svg>`;
  }
  const max = Math.max(...finite);
  const min = Math.min(0, ...finite);
  const span = max - min || 1;
  const step = finite.length > 1 ? (width - 2 * pad) / (finite.length - 1) : 0;
  const points = finite.map((value, index) => {
    const x = finite.length > 1 ? pad + index * step : width / 2;
    const y = height - pad - ((value - min) / span) * (height - 2 * pad);
    return [round(x), round(y)] as const;
  });
  const [lastX, lastY] = points.at(-1) ?? [0, 0];
  const line = points.map(([x, y]) => `${x},${y}`).join(' ');
  return `${open}<polyline points="${line}" fill="none" class="spark-line"/><circle cx="${lastX}" cy="${lastY}" r="2.5" class="spark-dot"/></svg>`;
}
