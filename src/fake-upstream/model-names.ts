import { OptionError } from '../engine/errors.js';

/** What a request naming no configured model gets: the first model (`default`) or a 404 (`reject`). */
export type UnknownModels = 'default' | 'reject';

/** Unknown names listed in `/v1/models` at most: a client cycling names cannot grow the list without bound. */
const MAX_SEEN = 256;

/**
 * The model names requests may use. Configured names map to their model; `aliases` map more
 * names to one (`gpt-4o-mini → primary`); any other name is served by the first model unless
 * `unknown` is `reject` — so a client keeps its real model names (`gpt-4o-mini`,
 * `claude-3-5-haiku-latest`) without a scenario written to rename them. Names served that way
 * are listed in `/v1/models` too, as clients that check the list find them there.
 */
export class ModelNames {
  private readonly byName = new Map<string, number>();
  private readonly seen: string[] = [];

  constructor(
    private readonly names: readonly string[],
    aliases: Readonly<Record<string, string>> = {},
    private readonly unknown: UnknownModels = 'default',
  ) {
    names.forEach((n, i) => this.byName.set(n, i));
    for (const [alias, target] of Object.entries(aliases)) {
      const i = names.indexOf(target);
      if (i < 0)
        throw new OptionError(
          `models: alias "${alias}" points at "${target}", which is not a model (${names.join(', ')})`,
        );
      if (!this.byName.has(alias)) this.byName.set(alias, i);
    }
  }

  /** The model serving `name`, or -1 (a 404) when unknown names are rejected. */
  index(name: string): number {
    const i = this.byName.get(name);
    if (i !== undefined) return i;
    if (this.unknown === 'reject' || this.names.length === 0) return -1;
    if (this.seen.length < MAX_SEEN && !this.seen.includes(name)) this.seen.push(name);
    return 0;
  }

  /** Configured names, aliases, then the unknown names served so far. */
  list(): string[] {
    return [...this.byName.keys(), ...this.seen];
  }
}
