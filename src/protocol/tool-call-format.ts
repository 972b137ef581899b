// The tool-call formats Cohort reads and constrains: how a model writes a call (Qwen/Hermes tags,
// Llama 3.1's JSON, the plain rendering's JSON). Data only: the parser, the prompt and the grammar read it.

/** A model's tool-call format; null where its template shows none Cohort knows ('auto' is then unconstrained). */
export type ToolCallFormatName = 'hermes' | 'llama3-json' | 'plain-json';

export interface ToolCallFormat {
  /**
   * Text that opens a call, anywhere in a reply: the trigger after which the call is constrained.
   * '' for the JSON formats, whose call is the reply itself (opening it, or after another call).
   */
  open: string;
  /** Text that closes a call opened by `open` ('' for the JSON formats). */
  close: string;
  /** The key of the call's arguments object beside "name". */
  argumentsKey: 'arguments' | 'parameters';
  /** Between two calls of one reply, as the grammar writes them (the parser reads any whitespace, ',' or ';'). */
  separator: string;
}

export const TOOL_CALL_FORMATS: Readonly<Record<ToolCallFormatName, ToolCallFormat>> = {
  // Qwen2.5/Qwen3 and Hermes templates: <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>
  hermes: { open: '<tool_call>', close: '</tool_call>', argumentsKey: 'arguments', separator: '\n' },
  // Llama 3.1's template: the reply is {"name": ..., "parameters": ...}
  'llama3-json': { open: '', close: '', argumentsKey: 'parameters', separator: '\n' },
  // src/model/tool-prompt.ts's instruction, for templates without `tools`
  'plain-json': { open: '', close: '', argumentsKey: 'arguments', separator: '\n' },
};

/** The opening text of one call to `name` in a format, up to its arguments object (what the grammar forces once triggered). */
export function callPrefix(format: ToolCallFormat, name: string): string {
  const head = `{"name": ${JSON.stringify(name)}, "${format.argumentsKey}": `;
  return format.open ? `${format.open}\n${head}` : head;
}

/** The text closing one call after its arguments object. */
export function callSuffix(format: ToolCallFormat): string {
  return format.close ? `}\n${format.close}` : '}';
}
