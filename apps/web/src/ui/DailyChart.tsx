import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Counts } from '../api/types';
import { formatNumber } from './format';

const LINES = [
  { key: 'sent', label: 'Sent', stroke: '#2563eb' },
  { key: 'delivered', label: 'Delivered', stroke: '#15803d' },
  { key: 'bounced', label: 'Bounced', stroke: '#b91c1c' },
  { key: 'complained', label: 'Complained', stroke: '#9333ea' },
  { key: 'opened', label: 'Opened', stroke: '#c2410c' },
  { key: 'clicked', label: 'Clicked', stroke: '#0e7490' },
] as const;

/**
 * Daily counts as lines (uPlot, canvas), with the same figures as a table for screen readers.
 * Used by the Overview and Analytics pages; loaded lazily (uPlot is only needed here).
 */
export default function DailyChart({ series, caption }: { series: (Counts & { date: string })[]; caption: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [
      series.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000),
      ...LINES.map((l) => series.map((d) => d[l.key])),
    ];
    const chart = new uPlot(
      {
        width: el.clientWidth || 800,
        height: 220,
        legend: { live: false },
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, max)] } },
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => formatNumber(t)) }],
        series: [{ label: 'Day' }, ...LINES.map((l) => ({ label: l.label, stroke: l.stroke, width: 2 }))],
      },
      data,
      el,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: el.clientWidth, height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [series]);
  return (
    <figure className="chart">
      <div ref={box} aria-hidden="true" />
      <figcaption className="visually-hidden">{caption}; the table below has the same figures.</figcaption>
      <details>
        <summary>Show the figures per day</summary>
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                {LINES.map((l) => (
                  <th key={l.key} scope="col" className="num">
                    {l.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {series.map((d) => (
                <tr key={d.date}>
                  <th scope="row">{d.date}</th>
                  {LINES.map((l) => (
                    <td key={l.key} className="num">
                      {formatNumber(d[l.key])}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
