// The one error type every model loader throws: which file, what is wrong with it.
// Not a logger and not for programming errors (those stay plain Errors).

export class ModelFormatError extends Error {
  readonly file: string;
  readonly problem: string;

  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
    this.name = 'ModelFormatError';
    this.file = file;
    this.problem = problem;
  }
}

/** Throws a ModelFormatError unless cond holds; keeps guard clauses one line each. */
export function check(cond: unknown, file: string, problem: string): asserts cond {
  if (!cond) throw new ModelFormatError(file, problem);
}
