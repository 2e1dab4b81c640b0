import { html } from "hono/html";

export interface ChartPoint {
  label: string;
  value: number;
}

/**
 * A bar chart as inline SVG (no script, no external file; the CSP allows neither). Presentation
 * attributes rather than style attributes, which a nonce cannot cover. The numbers are also in
 * the accessible name, so a screen reader gets what the picture shows.
 */
export function barChart(title: string, points: readonly ChartPoint[], unit: string) {
  const width = 560;
  const height = 160;
  const pad = { top: 16, bottom: 28, left: 8, right: 8 };
  const max = Math.max(1, ...points.map((point) => point.value));
  const slot = (width - pad.left - pad.right) / Math.max(1, points.length);
  const bar = Math.max(4, slot * 0.6);
  const scale = (value: number) => ((height - pad.top - pad.bottom) * value) / max;
  const summary = points.map((point) => `${point.label}: ${point.value}${unit}`).join(", ");
  return html`<figure class="chart"><figcaption>${title}</figcaption>
<svg viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="${title}. ${summary}">
<line x1="${pad.left}" y1="${height - pad.bottom}" x2="${width - pad.right}" y2="${height - pad.bottom}" stroke="#d0d7de"/>
${points.map((point, index) => {
  const x = pad.left + index * slot + (slot - bar) / 2;
  const h = scale(point.value);
  const y = height - pad.bottom - h;
  return html`<g><rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${bar.toFixed(1)}" height="${h.toFixed(1)}" fill="#0b5cad" rx="2"><title>${point.label}: ${point.value}${unit}</title></rect>
<text x="${(x + bar / 2).toFixed(1)}" y="${(y - 3).toFixed(1)}" font-size="11" text-anchor="middle" fill="#1b1f24">${point.value}</text>
<text x="${(x + bar / 2).toFixed(1)}" y="${height - pad.bottom + 16}" font-size="11" text-anchor="middle" fill="#57606a">${point.label}</text></g>`;
})}
</svg></figure>`;
}
