import { yaml } from '../scenario/yaml-module.js';
import type { Draft } from './derive.js';

/** One comment line per entry (a comment never spans lines: newlines in a note become spaces). */
function comment(lines: string[], indent = ''): string {
  return lines.map((l) => `#${indent === '' ? ' ' : indent}${l.replace(/\s*\n\s*/g, ' ')}`.trimEnd()).join('\n');
}

/** The calibrated scenario as YAML: the header, how each part was fitted, what was approximated, then the document. */
export function scenarioText(d: Draft, extra: string[] = []): string {
  const parts = [comment(d.header)];
  parts.push(`#\n# how each part was fitted:\n${comment(d.fits, '   - ')}`);
  if (d.notes.length > 0)
    parts.push(`#\n# approximated, or not derived from the traces:\n${comment(d.notes, '   - ')}`);
  if (extra.length > 0) parts.push(`#\n${comment(extra)}`);
  const y = yaml();
  const doc = new y.Document(d.doc);
  // A mapping or list of plain values on one line (`{ dist: lognormal, median: 300ms, p99: 2s }`), as scenarios are written.
  y.visit(doc, {
    Map: (_, node) => {
      if (node.items.every((p) => y.isScalar(p.value) || (y.isSeq(p.value) && p.value.items.every(y.isScalar))))
        node.flow = true;
    },
    Seq: (_, node) => {
      if (node.items.every(y.isScalar)) node.flow = true;
    },
  });
  const body = doc.toString({ lineWidth: 0 });
  return `${parts.join('\n')}\n${body}`;
}
