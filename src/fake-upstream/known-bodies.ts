/**
 * Values read from request bodies, by the body's text, at most `max` of them (past it the
 * memory starts over). The body looked up last is checked first by comparing the text: a load
 * tool or an agent's retries send the same body again and again, and comparing two texts costs
 * far less than hashing one (a map lookup hashes the whole text of every new request string).
 */
export class KnownBodies<T> {
  private readonly known = new Map<string, T>();
  private lastText: string | undefined = undefined;
  private lastValue: T | undefined = undefined;

  constructor(private readonly max: number) {}

  get(text: string): T | undefined {
    if (text === this.lastText) return this.lastValue;
    const value = this.known.get(text);
    if (value !== undefined) this.remember(text, value);
    return value;
  }

  set(text: string, value: T): void {
    if (this.known.size >= this.max) this.known.clear();
    this.known.set(text, value);
    this.remember(text, value);
  }

  private remember(text: string, value: T): void {
    this.lastText = text;
    this.lastValue = value;
  }
}
