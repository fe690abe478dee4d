/** The longest completion text written, in words (usage still reports what the model counted). */
export const MAX_FILLER_WORDS = 4096;

const WORDS = [
  'the',
  'storm',
  'passes',
  'when',
  'retries',
  'stay',
  'within',
  'their',
  'budget',
  'and',
  'every',
  'layer',
  'keeps',
  'its',
  'calm',
  'while',
  'tokens',
  'flow',
  'upstream',
];

/** One long text and where each word ends in it, so that any run of words is one `slice`. */
const ends = new Int32Array(MAX_FILLER_WORDS + 1);
const text = (() => {
  let s = '';
  for (let i = 0; i < MAX_FILLER_WORDS; i++) {
    s += (i === 0 ? '' : ' ') + WORDS[i % WORDS.length];
    ends[i + 1] = s.length;
  }
  return s;
})();

/**
 * Words `from` (inclusive) to `to` (exclusive) of a fixed filler text: about one token per
 * word. Consecutive runs concatenate into the run they cover, so stream chunks add up to the
 * text a non-streamed answer would give.
 */
export function fillerText(from: number, to: number): string {
  const a = Math.max(0, Math.min(from, MAX_FILLER_WORDS));
  const b = Math.max(a, Math.min(to, MAX_FILLER_WORDS));
  return text.slice(a === 0 ? 0 : ends[a], ends[b]);
}
