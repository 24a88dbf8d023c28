/** Hand-drawn SVG charts: a line chart with several series and a bar chart, with axes and labels. */
const NS = 'http://www.w3.org/2000/svg';
const W = 560;
const H = 180;
const PAD = { l: 64, r: 12, t: 12, b: 26 };

export interface Series {
  name: string;
  color: string;
  values: Array<number | null>;
}

function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/**
 * The top of the axis: four equal steps of 1, 2 or 5 times a power of ten (0, 2, 4, 6, 8 rather than 0, 1.3, 2.5, 3.8,
 * 5), whole steps for whole numbers (counts never get a tick of 0.5).
 */
function niceMax(v: number, whole = Number.isInteger(v)): number {
  if (v <= 0) return 4;
  const raw = v / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  let step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  if (whole) step = Math.max(1, Math.ceil(step));
  return step * 4;
}

/**
 * An axis tick for people: whole numbers with thousands separators up to a million (`3,750`), then `1.5M`; a fraction
 * with as few decimals as the step between ticks needs (`0.25`, `0.0040`), never an exponent.
 */
export function fmt(v: number, step = v): string {
  if (v === 0) return '0';
  if (Math.abs(v) >= 1e6) return `${Number((v / 1e6).toFixed(2))}M`;
  if (Number.isInteger(v) && Number.isInteger(step)) return v.toLocaleString('en-US');
  const decimals = Math.min(6, Math.max(0, -Math.floor(Math.log10(Math.abs(step) || 1)) + 1));
  return v.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

function frame(title: string, labels: string[], max: number, unit: string): SVGSVGElement {
  const root = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'chart',
    role: 'img',
    'aria-label': title,
  }) as SVGSVGElement;
  const ih = H - PAD.t - PAD.b;
  for (let i = 0; i <= 4; i++) {
    const y = PAD.t + ih - (ih * i) / 4;
    root.appendChild(svg('line', { x1: PAD.l, x2: W - PAD.r, y1: y, y2: y, class: i === 0 ? 'axis' : 'grid' }));
    root.appendChild(
      svg(
        'text',
        { x: PAD.l - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' },
        `${fmt((max * i) / 4, max / 4)}${i === 4 ? unit : ''}`,
      ),
    );
  }
  const n = labels.length;
  const xs = n > 1 ? [0, Math.floor((n - 1) / 2), n - 1] : [0];
  for (const i of xs) {
    const x = PAD.l + (n > 1 ? ((W - PAD.l - PAD.r) * i) / (n - 1) : (W - PAD.l - PAD.r) / 2);
    root.appendChild(
      svg(
        'text',
        { x, y: H - 8, 'text-anchor': i === 0 ? 'start' : i === n - 1 ? 'end' : 'middle', class: 'tick' },
        labels[i] ?? '',
      ),
    );
  }
  return root;
}

export function lineChart(title: string, labels: string[], series: Series[], unit = ''): HTMLElement {
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const max = niceMax(
    Math.max(0, ...all),
    all.every((x) => Number.isInteger(x)),
  );
  const root = frame(title, labels, max, unit);
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const n = labels.length;
  for (const s of series) {
    let d = '';
    s.values.forEach((v, i) => {
      if (v === null) return;
      const x = PAD.l + (n > 1 ? (iw * i) / (n - 1) : iw / 2);
      const y = PAD.t + ih - (ih * v) / max;
      const prev = i > 0 ? s.values[i - 1] : null;
      d += `${d && prev !== null ? 'L' : 'M'}${x.toFixed(1)},${y.toFixed(1)} `;
      if (prev === null && (i === n - 1 || s.values[i + 1] === null))
        root.appendChild(svg('circle', { cx: x, cy: y, r: 2.5, fill: s.color }));
    });
    if (d)
      root.appendChild(
        svg('path', { d, fill: 'none', stroke: s.color, 'stroke-width': 2, 'stroke-linejoin': 'round' }),
      );
  }
  return wrap(
    title,
    root,
    series,
    all.reduce((a, b) => a + b, 0),
  );
}

export function barChart(title: string, labels: string[], s: Series, unit = ''): HTMLElement {
  const vals = s.values.map((v) => v ?? 0);
  const max = niceMax(
    Math.max(0, ...vals),
    vals.every((x) => Number.isInteger(x)),
  );
  const root = frame(title, labels, max, unit);
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const step = iw / Math.max(1, vals.length);
  vals.forEach((v, i) => {
    const bh = (ih * v) / max;
    if (v > 0)
      root.appendChild(
        svg('rect', {
          x: PAD.l + i * step + step * 0.15,
          y: PAD.t + ih - bh,
          width: Math.max(1, step * 0.7),
          height: Math.max(1, bh),
          fill: s.color,
        }),
      );
  });
  return wrap(
    title,
    root,
    [s],
    vals.reduce((a, b) => a + b, 0),
  );
}

function wrap(title: string, chart: SVGElement, series: Series[], total: number): HTMLElement {
  const fig = document.createElement('figure');
  fig.className = 'card chart-card';
  fig.dataset.total = String(total);
  fig.dataset.chart = title;
  const cap = document.createElement('figcaption');
  cap.textContent = title;
  for (const s of series) {
    const key = document.createElement('span');
    key.className = 'legend';
    key.style.setProperty('--c', s.color);
    key.textContent = s.name;
    cap.appendChild(key);
  }
  fig.append(cap, chart);
  return fig;
}
