/**
 * A small, strict XML reader for tests (the package has no XML parser, and JUnit consumers
 * reject what a lenient one would let through): an optional `<?xml …?>` declaration, one root
 * element, elements with quoted attributes, text, comments, the five predefined entities and
 * character references. Anything else — an unbalanced tag, a raw `<` or `&`, an unknown entity,
 * a duplicate attribute, a character XML 1.0 forbids — throws, naming the offset.
 */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** The element's own text (entities decoded), children's text not included. */
  text: string;
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

function isNameStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c === ':';
}

function isNameChar(c: string): boolean {
  return isNameStart(c) || (c >= '0' && c <= '9') || c === '-' || c === '.';
}

class Reader {
  private i = 0;
  constructor(private readonly s: string) {}

  fail(why: string): never {
    throw new Error(`XML: ${why} at offset ${this.i} (near ${JSON.stringify(this.s.slice(this.i, this.i + 30))})`);
  }

  document(): XmlElement {
    this.checkChars();
    if (this.s.startsWith('<?xml')) this.declaration();
    this.misc();
    if (this.s[this.i] !== '<') this.fail('expected the root element');
    const root = this.element();
    this.misc();
    if (this.i !== this.s.length) this.fail('content after the root element');
    return root;
  }

  private checkChars(): void {
    for (const ch of this.s) {
      const code = ch.codePointAt(0)!;
      // A lone surrogate comes out of for…of as one code unit in the surrogate range.
      if (!isXmlChar(code)) {
        this.i = this.s.indexOf(ch);
        this.fail(`character U+${code.toString(16).toUpperCase().padStart(4, '0')} is not allowed in XML`);
      }
    }
  }

  private declaration(): void {
    const end = this.s.indexOf('?>');
    if (end < 0) this.fail('unterminated declaration');
    const decl = this.s.slice(0, end);
    if (!decl.startsWith('<?xml version="1.0"')) this.fail('the declaration must start with <?xml version="1.0"');
    this.i = end + 2;
  }

  /** Whitespace and comments between the declaration, the root and the end. */
  private misc(): void {
    for (;;) {
      this.spaces();
      if (this.s.startsWith('<!--', this.i)) this.comment();
      else return;
    }
  }

  private comment(): void {
    const end = this.s.indexOf('-->', this.i + 4);
    if (end < 0) this.fail('unterminated comment');
    if (this.s.slice(this.i + 4, end).includes('--')) this.fail('"--" inside a comment');
    this.i = end + 3;
  }

  private spaces(): number {
    const start = this.i;
    while (this.i < this.s.length && ' \t\r\n'.includes(this.s[this.i])) this.i++;
    return this.i - start;
  }

  private name(): string {
    const start = this.i;
    if (!isNameStart(this.s[this.i] ?? '')) this.fail('expected a name');
    while (this.i < this.s.length && isNameChar(this.s[this.i])) this.i++;
    return this.s.slice(start, this.i);
  }

  private element(): XmlElement {
    this.i++; // <
    const el: XmlElement = { name: this.name(), attrs: {}, children: [], text: '' };
    for (;;) {
      const gap = this.spaces();
      if (this.s.startsWith('/>', this.i)) {
        this.i += 2;
        return el;
      }
      if (this.s[this.i] === '>') {
        this.i++;
        this.content(el);
        return el;
      }
      if (gap === 0) this.fail('expected whitespace before an attribute');
      this.attribute(el);
    }
  }

  private attribute(el: XmlElement): void {
    const name = this.name();
    if (name in el.attrs) this.fail(`duplicate attribute ${name}`);
    this.spaces();
    if (this.s[this.i] !== '=') this.fail('expected =');
    this.i++;
    this.spaces();
    const quote = this.s[this.i];
    if (quote !== '"' && quote !== "'") this.fail('expected a quoted value');
    this.i++;
    let value = '';
    while (this.s[this.i] !== quote) {
      if (this.i >= this.s.length) this.fail('unterminated attribute value');
      if (this.s[this.i] === '<') this.fail('raw < in an attribute value');
      value += this.s[this.i] === '&' ? this.entity() : this.s[this.i++];
    }
    this.i++;
    el.attrs[name] = value;
  }

  private content(el: XmlElement): void {
    for (;;) {
      if (this.i >= this.s.length) this.fail(`unclosed <${el.name}>`);
      if (this.s.startsWith('</', this.i)) {
        this.i += 2;
        const name = this.name();
        if (name !== el.name) this.fail(`</${name}> closes <${el.name}>`);
        this.spaces();
        if (this.s[this.i] !== '>') this.fail('expected > to end a closing tag');
        this.i++;
        return;
      }
      if (this.s.startsWith('<!--', this.i)) this.comment();
      else if (this.s[this.i] === '<') el.children.push(this.element());
      else if (this.s[this.i] === '&') el.text += this.entity();
      else {
        if (this.s.startsWith(']]>', this.i)) this.fail(']]> in text');
        el.text += this.s[this.i++];
      }
    }
  }

  private entity(): string {
    const end = this.s.indexOf(';', this.i);
    if (end < 0 || end - this.i > 10) this.fail('a raw & (not an entity)');
    const ref = this.s.slice(this.i + 1, end);
    let out: string | undefined = ENTITIES[ref];
    const num = ref.startsWith('#x') ? parseInt(ref.slice(2), 16) : ref.startsWith('#') ? Number(ref.slice(1)) : NaN;
    if (out === undefined && Number.isInteger(num) && isXmlChar(num)) out = String.fromCodePoint(num);
    if (out === undefined) this.fail(`unknown entity &${ref};`);
    this.i = end + 1;
    return out;
  }
}

/** The root element of `xml`, or an Error saying where it is not well-formed. */
export function parseXml(xml: string): XmlElement {
  return new Reader(xml).document();
}

/** Every element named `name` under `el` (itself included), depth first. */
export function elements(el: XmlElement, name: string): XmlElement[] {
  return [...(el.name === name ? [el] : []), ...el.children.flatMap((c) => elements(c, name))];
}
