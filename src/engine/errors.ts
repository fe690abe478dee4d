/** Every error the engine throws carries a stable `code` that callers can switch on. */
export class StormlabError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An option outside its range; the message names the option and the value. */
export class OptionError extends StormlabError {
  constructor(message: string) {
    super('ERR_STORMLAB_OPTION', message);
  }
}
