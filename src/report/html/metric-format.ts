import { formatCount, formatMs, formatPercent, formatRate, formatTimes, sig3 } from '../format.js';

/**
 * A sweep metric's value as people read it, judged by its name (`amplification` → `1.07×`,
 * `layers.llm.p99` → `1.23 s`, `goodput` → `15.3/s`, `successRate` → `95.1 %`).
 */
export function formatMetric(name: string, value: number | null): string {
  if (value === null) return '—';
  const last = name.split('.').pop() ?? name;
  if (/amplification/i.test(last)) return formatTimes(value);
  if (/^p\d+$|Ms$|^recovery$|latency/i.test(last)) return formatMs(value);
  if (/goodput/i.test(last)) return formatRate(value);
  if (/rate$|share/i.test(name)) return formatPercent(value);
  if (/tokens|^shed$|attempts|calls/i.test(last)) return formatCount(value);
  return sig3(value);
}
