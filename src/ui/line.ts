/**
 * Dashboard text as data: a line is a list of segments, each with a tone. Panels build lines
 * (so the dashboard can count their height before laying them out) and `Lines` renders them.
 * Every glyph used is one terminal column wide, so a line's width is its code-point count.
 */

/** What a segment means; `Lines` maps tones to colours (or to nothing without colour). */
export type Tone = 'plain' | 'good' | 'warn' | 'bad' | 'dim' | 'bold' | 'accent';

export interface Segment {
  text: string;
  tone: Tone;
}

export type Line = Segment[];

export const seg = (text: string, tone: Tone = 'plain'): Segment => ({ text, tone });

/** The width of a string in terminal columns (every glyph the UI uses is one column). */
export function textWidth(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export function lineWidth(line: Line): number {
  return line.reduce((w, s) => w + textWidth(s.text), 0);
}

/** The first `width` columns of `text`. */
export function cut(text: string, width: number): string {
  if (width <= 0) return '';
  return textWidth(text) <= width ? text : Array.from(text).slice(0, width).join('');
}

/** `line` cut to `width` columns, ending in `…` when something was cut off. */
export function fitLine(line: Line, width: number): Line {
  if (lineWidth(line) <= width) return line;
  const out: Line = [];
  let left = width - 1;
  for (const s of line) {
    if (left <= 0) break;
    const text = cut(s.text, left);
    out.push(seg(text, s.tone));
    left -= textWidth(text);
  }
  out.push(seg('…', 'dim'));
  return out;
}

export function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - textWidth(text)));
}

export function padStart(text: string, width: number): string {
  return ' '.repeat(Math.max(0, width - textWidth(text))) + text;
}

/** Segments joined by `sep` (a dim separator by default). */
export function joined(parts: Line[], sep: Segment = seg(' · ', 'dim')): Line {
  return parts.flatMap((p, i) => (i === 0 ? p : [sep, ...p]));
}

/**
 * Items packed greedily onto lines of at most `width` columns, separated by two spaces; the
 * first line starts with `indent`, the others with `nextIndent`. An item wider than a line gets
 * a line of its own.
 */
export function flow(items: Line[], width: number, indent: string, nextIndent = indent): Line[] {
  const lines: Line[] = [];
  let current: Line = [];
  let used = 0;
  for (const item of items) {
    const w = lineWidth(item);
    if (current.length > 0 && used + 2 + w > width) {
      lines.push(current);
      current = [];
    }
    if (current.length === 0) {
      const lead = lines.length === 0 ? indent : nextIndent;
      current = [seg(lead), ...item];
      used = textWidth(lead) + w;
    } else {
      current.push(seg('  '), ...item);
      used += 2 + w;
    }
  }
  if (current.length > 0) lines.push(current);
  return lines;
}

/** A title rule: `── naive · ✗ upstream · ✗ tasks ─────` filling `width`. */
export function rule(title: Line, width: number, tone: Tone = 'dim'): Line {
  const rest = width - lineWidth(title) - 4;
  return [seg('── ', tone), ...title, seg(` ${'─'.repeat(Math.max(0, rest))}`, tone)];
}
