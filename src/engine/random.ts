/** Randomness is an input: primitives draw from a `Random`, never from `Math.random`. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
}

/** FNV-1a over the string's UTF-16 units: turns labels and string seeds into 32-bit seeds. */
export function hashSeed(value: string | number): number {
  const text = String(value);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * sfc32, seeded through splitmix32: fast, 128 bits of state, passes PractRand far past what a
 * simulation draws. `split(label)` derives an independent stream per subsystem, so adding draws
 * in one subsystem does not shift the numbers another one sees.
 */
export class SeededRandom implements Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  readonly seed: number;

  constructor(seed: string | number) {
    this.seed = typeof seed === 'number' && Number.isInteger(seed) ? seed >>> 0 : hashSeed(seed);
    let s = this.seed;
    const mix = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix();
    for (let i = 0; i < 12; i++) this.next();
  }

  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An independent stream for `label`, fixed by this stream's seed and the label alone. */
  split(label: string): SeededRandom {
    return new SeededRandom(hashSeed(`${this.seed}/${label}`));
  }
}
