import { overrideRecords } from './override-records.js';
import { parseText } from './parse-text.js';
import { readScenarioArg } from './read-scenario-file.js';
import { ScenarioError } from './scenario-error.js';
import {
  pickVariants,
  type CommandSet,
  type EffectiveRun,
  type EffectiveScenarios,
  type ScenarioRequest,
} from './scenario-request.js';
import type { Variant } from './scenario.js';
import { applyEach, parsePath, parseSetText, pathsOverlap, type LabelledOverride } from './set-override.js';
import { validateDocument, variantsOf } from './validate.js';

/**
 * The one way a scenario argument becomes what runs: reads the file (or the bundled scenario
 * the name stands for), then resolves the documents the request asks for (see
 * `resolveDocument`). Synchronous, for worker threads; commands go through
 * `effectiveScenarios`, which answers a bundled scenario run as written from the build.
 */
export function resolveScenario(req: ScenarioRequest): EffectiveScenarios {
  const raw = readScenarioArg(req.arg, req.cwd);
  const parsed = parseText(raw.text, raw.format);
  if (!parsed.ok) throw new ScenarioError(req.arg, parsed.problems);
  return resolveDocument(parsed.doc, req.arg, req);
}

/**
 * Every document a run is made of, in one order: the file's document, then the variant's
 * overrides, then the command line's — so the command line wins, over the file and over any
 * variant. Each document that runs is validated as a whole, and refused with every problem,
 * one line each: a problem where a command-line override wrote is that flag's, named with the
 * variant it broke (`--set "…" with variant engine: …`) unless it breaks every run; one of the
 * variant's own is `variants.<name>: …`. With `checkFile`, what does not run is checked too,
 * for problems of the file's own.
 */
export function resolveDocument(
  file: unknown,
  source: string,
  req: Omit<ScenarioRequest, 'arg' | 'cwd'>,
): EffectiveScenarios {
  const sets = commandOverrides(req.set ?? []);
  // The variants are read from the document the command line changed: `--set variants=…` is an override too.
  const listed = variantsOf(applyEach(file, sets.overrides).doc);
  if (!listed.ok) throw new ScenarioError(source, [...sets.problems, ...listed.problems]);
  const known = listed.variants;
  const names = pickVariants(
    req.variants,
    known.map((v) => v.name),
    source,
    req.flag,
  );
  const chosen = names.length === 0 ? [undefined] : names.map((n) => known.find((v) => v.name === n));
  const runs = new Map<Variant | undefined, EffectiveRun>();
  const problems = new Problems(chosen.length);
  for (const variant of [undefined, ...known]) {
    const runsHere = chosen.includes(variant);
    if (!runsHere && !req.checkFile) continue;
    const r = tryRun(file, source, variant, sets.overrides);
    if (r.ok) runs.set(variant, r.run);
    // What does not run is not broken by the command line: only the file's own problems count there.
    else for (const p of r.problems) if (runsHere || p.origin === undefined) problems.add(p);
    // …but what a flag breaks there too is the flag's alone, whichever variant runs.
    if (!r.ok && !runsHere && variant === undefined) for (const p of r.problems) problems.asWritten(p);
    // A document that does not hold as written: its variants would only say it again.
    if (variant === undefined && !problems.empty) break;
  }
  // A malformed flag is said with everything else wrong: one run shows every problem.
  if (!problems.empty || sets.problems.length > 0)
    throw new ScenarioError(source, [...sets.problems, ...problems.lines()]);
  return { runs: chosen.map((v) => runs.get(v) as EffectiveRun), variants: known.map((v) => v.name) };
}

/** A problem of one document: where it is, whose it is (a command-line flag's `origin`, or the file's), which variant. */
interface Problem {
  text: string;
  origin?: string;
  variant?: string;
}

/**
 * The problems of every document, each said once: the file's own once however many documents
 * have it, a flag's with the variants it broke, or bare when it broke every run (or the
 * scenario as written too: then no variant had a part in it).
 */
class Problems {
  private readonly own = new Set<string>();
  private readonly flags = new Map<string, { origin: string; text: string; variants: Array<string | undefined> }>();
  private readonly order: Array<{ own: string } | { flag: string }> = [];
  /** Flags' problems the scenario as written has too (then no variant is to blame). */
  private readonly flat = new Set<string>();

  constructor(private readonly runs: number) {}

  get empty(): boolean {
    return this.order.length === 0;
  }

  add(p: Problem): void {
    if (p.origin === undefined) {
      const line = p.variant === undefined ? p.text : `variants.${p.variant}: ${p.text}`;
      // The file's problem in a variant's document is the file's, said once.
      if (this.own.has(line) || (p.variant !== undefined && this.own.has(p.text))) return;
      this.own.add(line);
      this.order.push({ own: line });
      return;
    }
    const key = `${p.origin}\n${p.text}`;
    const seen = this.flags.get(key);
    if (seen !== undefined) seen.variants.push(p.variant);
    else {
      this.flags.set(key, { origin: p.origin, text: p.text, variants: [p.variant] });
      this.order.push({ flag: key });
    }
  }

  /** A problem of the scenario as written, which does not run: a flag's, it is not any variant's doing. */
  asWritten(p: Problem): void {
    if (p.origin !== undefined) this.flat.add(`${p.origin}\n${p.text}`);
  }

  lines(): string[] {
    return this.order.map((o) => {
      if ('own' in o) return o.own;
      const f = this.flags.get(o.flag)!;
      const named = f.variants.filter((v): v is string => v !== undefined);
      const which =
        named.length === 0 || this.flat.has(o.flag) || (this.runs > 1 && f.variants.length === this.runs)
          ? ''
          : ` with variant${named.length === 1 ? '' : 's'} ${named.join(', ')}`;
      return `${f.origin}${which}: ${f.text}`;
    });
  }
}

/** The document of one run: the file's, the variant's overrides on it, the command line's on top; validated. */
function tryRun(
  file: unknown,
  source: string,
  variant: Variant | undefined,
  sets: readonly LabelledOverride[],
): { ok: true; run: EffectiveRun } | { ok: false; problems: Problem[] } {
  const name = variant?.name;
  const own: LabelledOverride[] = (variant?.set ?? []).map((o) => ({ ...o, from: `variant ${name}` }));
  const withVariant = applyEach(file, own);
  // Overrides that do not fit the document are the variant's to fix before anything else is judged.
  if (withVariant.problems.length > 0)
    return {
      ok: false,
      problems: withVariant.problems.map((p) => ({ text: `${p.override.path}: ${p.message}`, variant: name })),
    };
  const withSets = applyEach(withVariant.doc, sets);
  const problems: Problem[] = withSets.problems.map((p) => ({
    text: p.message,
    origin: p.override.origin,
    variant: name,
  }));
  const r = validateDocument(withSets.doc, name === undefined ? source : `${source} (variant ${name})`);
  if (!r.ok) problems.push(...r.problems.map((text) => ({ ...blame(text, sets), variant: name })));
  if (problems.length > 0 || !r.ok) return { ok: false, problems };
  return {
    ok: true,
    run: {
      name: name ?? r.scenario.name,
      ...(name === undefined ? {} : { variant: name }),
      scenario: r.scenario,
      overrides: overrideRecords(file, [...own, ...sets]),
    },
  };
}

/**
 * The command line's overrides, each labelled for messages as the user wrote it (`--set
 * "arrival.rate=5"`, `--duration 30s`); a malformed one is a problem naming the flag.
 */
function commandOverrides(sets: readonly CommandSet[]): { overrides: LabelledOverride[]; problems: string[] } {
  const overrides: LabelledOverride[] = [];
  const problems: string[] = [];
  for (const s of sets) {
    const origin =
      s.from === '--set' ? `--set ${JSON.stringify(s.text)}` : `${s.from} ${s.text.slice(s.text.indexOf('=') + 1)}`;
    const r = parseSetText(s.text);
    if (r.ok) overrides.push({ ...r.override, origin, from: s.from });
    else problems.push(`${origin}: ${r.message}`);
  }
  return { overrides, problems };
}

/**
 * A problem at a path a command-line override wrote (or inside it, or above it:
 * `engine.budget: unknown key` for `--set engine.budget.ratio=0.1`) is that flag's, not the
 * file's: the last such override is its `origin`.
 */
function blame(problem: string, overrides: readonly LabelledOverride[]): { text: string; origin?: string } {
  const colon = problem.indexOf(': ');
  const at = colon > 0 ? parsePath(problem.slice(0, colon)) : undefined;
  if (at === undefined || !at.ok) return { text: problem };
  for (let i = overrides.length - 1; i >= 0; i--) {
    const o = parsePath(overrides[i].path);
    if (o.ok && overrides[i].origin !== undefined && pathsOverlap(o.segments, at.segments))
      return { text: problem, origin: overrides[i].origin };
  }
  return { text: problem };
}
