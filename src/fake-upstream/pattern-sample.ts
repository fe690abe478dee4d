import type { Random } from '../engine/random.js';

/** A character set as inclusive code-point ranges; `negated` means every printable ASCII character outside them. */
interface CharSet {
  kind: 'set';
  ranges: Array<[number, number]>;
  negated: boolean;
}
type Atom = { kind: 'text'; text: string } | CharSet | { kind: 'group'; alternatives: Sequence[] };
interface Piece {
  atom: Atom;
  min: number;
  max: number;
}
type Sequence = Piece[];

/** Open-ended repeats (`*`, `+`, `{2,}`) draw at most this many more than their minimum. */
const OPEN_REPEAT = 3;
const DIGIT: Array<[number, number]> = [[48, 57]];
const WORD: Array<[number, number]> = [
  [48, 57],
  [65, 90],
  [95, 95],
  [97, 122],
];
const SPACE: Array<[number, number]> = [[32, 32]];
const LETTERS: Array<[number, number]> = [[97, 122]];

class Unsupported extends Error {}

/**
 * A string matching a JSON Schema `pattern` (an ECMA-262 regular expression, unanchored as
 * the schema reads it), drawn from `random`: literals, classes (`[a-z0-9_]`, `[^,]`, `\d`,
 * `\w`, `\s`, `.`), groups with alternatives, and quantifiers (`?`, `*`, `+`, `{n}`, `{n,m}`).
 * Undefined for what it does not cover (lookarounds, back-references) or a pattern that is not
 * a valid expression, so the caller can keep its own value. The result is checked against the
 * pattern itself, and against `fits` (length limits), over a few draws.
 */
export function sampleForPattern(
  pattern: string,
  random: Random,
  fits: (s: string) => boolean = () => true,
): string | undefined {
  let re: RegExp;
  let tree: Sequence[];
  try {
    re = compile(pattern);
    tree = new PatternParser(pattern).parse();
  } catch {
    return undefined;
  }
  for (let i = 0; i < 8; i++) {
    const s = draw(tree, random);
    if (re.test(s) && fits(s)) return s;
  }
  return undefined;
}

/** With the `u` flag when the pattern needs it (`\p{L}`), without when it uses what `u` forbids (`\-`). */
function compile(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return new RegExp(pattern);
  }
}

function draw(alternatives: Sequence[], random: Random): string {
  const seq = alternatives[Math.floor(random.next() * alternatives.length)];
  let out = '';
  for (const p of seq) {
    const n = p.min + Math.floor(random.next() * (p.max - p.min + 1));
    for (let k = 0; k < n; k++) out += drawAtom(p.atom, random);
  }
  return out;
}

function drawAtom(a: Atom, random: Random): string {
  if (a.kind === 'text') return a.text;
  if (a.kind === 'group') return draw(a.alternatives, random);
  const ranges = a.negated ? complement(a.ranges) : a.ranges;
  const total = ranges.reduce((n, [lo, hi]) => n + hi - lo + 1, 0);
  if (total === 0) throw new Unsupported('empty class');
  let k = Math.floor(random.next() * total);
  for (const [lo, hi] of ranges) {
    if (k <= hi - lo) return String.fromCodePoint(lo + k);
    k -= hi - lo + 1;
  }
  return String.fromCodePoint(ranges[0][0]);
}

/** Printable ASCII (space to `~`) outside `ranges`. */
function complement(ranges: Array<[number, number]>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = 32;
  for (let c = 32; c <= 127; c++) {
    const inside = c === 127 || ranges.some(([lo, hi]) => c >= lo && c <= hi);
    if (inside) {
      if (c > start) out.push([start, c - 1]);
      start = c + 1;
    }
  }
  return out;
}

class PatternParser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): Sequence[] {
    const alts = this.alternatives();
    if (this.i < this.src.length) throw new Unsupported(`unexpected ${this.src[this.i]}`);
    return alts;
  }

  private alternatives(): Sequence[] {
    const alts: Sequence[] = [this.sequence()];
    while (this.src[this.i] === '|') {
      this.i++;
      alts.push(this.sequence());
    }
    return alts;
  }

  private sequence(): Sequence {
    const seq: Sequence = [];
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      const c = this.src[this.i];
      if (c === '^' || c === '$') {
        this.i++;
        continue;
      }
      const atom = this.atom();
      if (atom !== undefined) seq.push(this.quantified(atom));
    }
    return seq;
  }

  private atom(): Atom | undefined {
    const c = this.src[this.i++];
    if (c === '(') {
      if (this.src[this.i] === '?') {
        const head = this.src.slice(this.i, this.i + 3);
        if (head.startsWith('?:')) this.i += 2;
        else if (head.startsWith('?<') && head !== '?<=' && head !== '?<!') this.i = this.src.indexOf('>', this.i) + 1;
        else throw new Unsupported('lookaround');
      }
      const alternatives = this.alternatives();
      if (this.src[this.i++] !== ')') throw new Unsupported('unclosed group');
      return { kind: 'group', alternatives };
    }
    if (c === '[') return this.charClass();
    if (c === '.') return { kind: 'set', ranges: LETTERS, negated: false };
    if (c === '\\') return this.escape(false);
    return { kind: 'text', text: c };
  }

  private escape(inClass: boolean): CharSet | { kind: 'text'; text: string } | undefined {
    const e = this.src[this.i++];
    const set = (ranges: Array<[number, number]>, negated = false): CharSet => ({ kind: 'set', ranges, negated });
    switch (e) {
      case 'd':
        return set(DIGIT);
      case 'D':
        return set(DIGIT, true);
      case 'w':
        return set(WORD);
      case 'W':
        return set(WORD, true);
      case 's':
        return set(SPACE);
      case 'S':
        return set(SPACE, true);
      case 'b':
        if (inClass) return { kind: 'text', text: '\b' };
        return undefined; // a word boundary matches between characters: nothing to write
      case 'B':
        throw new Unsupported('\\B');
      case 'n':
        return { kind: 'text', text: '\n' };
      case 't':
        return { kind: 'text', text: '\t' };
      case 'r':
        return { kind: 'text', text: '\r' };
      case 'x':
      case 'u': {
        const m = /^(?:\{([0-9a-fA-F]+)\}|([0-9a-fA-F]{4})|([0-9a-fA-F]{2}))/.exec(this.src.slice(this.i));
        if (m === null || (e === 'x' && m[3] === undefined)) throw new Unsupported('escape');
        this.i += m[0].length;
        return { kind: 'text', text: String.fromCodePoint(Number.parseInt(m[1] ?? m[2] ?? m[3], 16)) };
      }
      default:
        if (e === undefined || /[1-9k]/.test(e)) throw new Unsupported('back-reference');
        return { kind: 'text', text: e };
    }
  }

  private charClass(): CharSet {
    const negated = this.src[this.i] === '^';
    if (negated) this.i++;
    const ranges: Array<[number, number]> = [];
    let first = true;
    while (this.i < this.src.length && (this.src[this.i] !== ']' || first)) {
      first = false;
      const lo = this.classChar();
      if (typeof lo !== 'number') {
        if (lo.negated) throw new Unsupported('negated escape in a class');
        ranges.push(...lo.ranges);
        continue;
      }
      if (this.src[this.i] === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length) {
        this.i++;
        const hi = this.classChar();
        if (typeof hi !== 'number' || hi < lo) throw new Unsupported('range');
        ranges.push([lo, hi]);
      } else ranges.push([lo, lo]);
    }
    if (this.src[this.i++] !== ']') throw new Unsupported('unclosed class');
    return { kind: 'set', ranges, negated };
  }

  private classChar(): number | CharSet {
    const c = this.src[this.i++];
    if (c !== '\\') return c.codePointAt(0) as number;
    const e = this.escape(true);
    if (e === undefined) throw new Unsupported('escape');
    return e.kind === 'text' ? (e.text.codePointAt(0) as number) : e;
  }

  private quantified(atom: Atom): Piece {
    const q = this.src[this.i];
    let min = 1;
    let max = 1;
    if (q === '?' || q === '*' || q === '+') {
      this.i++;
      min = q === '+' ? 1 : 0;
      max = q === '?' ? 1 : min + OPEN_REPEAT;
    } else if (q === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (m === null) return { atom, min, max };
      this.i += m[0].length;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? min + OPEN_REPEAT : Number(m[3]);
      if (max < min) throw new Unsupported('repeat');
    }
    if (this.src[this.i] === '?') this.i++; // lazy: same strings
    return { atom, min, max };
  }
}
