import type { Dist } from '../upstream/distribution.js';
import { fitLognormal, round } from './fit-dist.js';
import type { ModelStats } from './observations.js';
import { Reservoir } from './reservoir.js';

/** Below this many answers a model's service time is a guess from what there is. */
export const FEW_ANSWERS = 10;

export interface ModelFit {
  ttft: Dist;
  tpot: Dist;
  /** How, for the report and the YAML. */
  how: string;
}

/**
 * A model's time to first token and time per output token from its successful attempts: from
 * first-token times where spans recorded them (streams), else from durations — a line through
 * duration against output tokens gives time per token (slope) and to first token (what is
 * left), or, when the durations do not grow with tokens, the whole duration is time to first token.
 */
export function fitModel(m: ModelStats): ModelFit {
  const d = m.answers.values();
  const x = m.answers.seconds();
  const n = d.length;
  if (n === 0)
    return {
      ttft: 500,
      tpot: 10,
      how: 'no successful answer with its output tokens seen: 500 ms and 10 ms/token assumed',
    };
  if (m.firstToken.count > 0 && m.firstToken.count >= m.answers.count / 2) {
    const ttft = fitLognormal(m.firstToken);
    const ft = m.firstToken.quantile(0.5);
    const per: number[] = [];
    for (let i = 0; i < n; i++) if (x[i] > 0) per.push(Math.max(0, d[i] - ft) / x[i]);
    per.sort((a, b) => a - b);
    const tpot = per.length === 0 ? 0 : per[Math.floor(per.length / 2)];
    return {
      ttft: ttft.dist,
      tpot: round(tpot),
      how: `from ${m.firstToken.count} first-token times (streamed spans); time per token = (duration − first token) ÷ output tokens`,
    };
  }
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i];
    my += d[i];
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (x[i] - mx) ** 2;
    sxy += (x[i] - mx) * (d[i] - my);
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  if (n < 3 || sxx <= 0 || slope <= 0) {
    return {
      ttft: fitLognormal(m.answers).dist,
      tpot: 0,
      how: `no first-token times recorded, and durations do not grow with output tokens (${n} answers): the whole duration is time to first token`,
    };
  }
  const intercept = my - slope * mx;
  const tpot = intercept >= 0 ? slope : median(d, x);
  const left = new Reservoir(Math.max(1, n));
  for (let i = 0; i < n; i++) left.add(Math.max(1, d[i] - tpot * x[i]));
  return {
    ttft: fitLognormal(left).dist,
    tpot: round(tpot),
    how:
      intercept >= 0
        ? `no first-token times recorded: duration against output tokens (${n} answers) gives ${round(tpot)} ms per token (slope), the rest is time to first token`
        : `no first-token times recorded: duration ÷ output tokens (${n} answers) gives ${round(tpot)} ms per token, the rest is time to first token`,
  };
}

function median(d: Float64Array, x: Float64Array): number {
  const r: number[] = [];
  for (let i = 0; i < d.length; i++) if (x[i] > 0) r.push(d[i] / x[i]);
  r.sort((a, b) => a - b);
  return r.length === 0 ? 0 : r[Math.floor(r.length / 2)];
}
