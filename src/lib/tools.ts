// `tools` and `tool_choice` as OpenAI shapes them: checked (a 400 naming the field), turned into the
// session's tool list and the output constraint ('auto': text or calls in the model's format;
// 'required' or a named function: one call). Not parsing replies.
import type { OutputConstraint, ToolDefinition } from '../protocol/api';
import { InvalidRequestError } from './errors';

/** OpenAI's limits: at most 128 functions, names of letters, digits, '_' and '-' up to 64. */
export const MAX_TOOLS = 128;
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface ToolPlan {
  /** The functions the prompt lists (none under tool_choice 'none'). */
  tools: ToolDefinition[];
  /** Names a reply may call; a reply is parsed for calls only when this is non-empty. */
  callable: string[];
  /**
   * The reply's constraint (src/engine/types.ts OutputConstraint): under 'auto', text or calls in the
   * model's own format (kind 'tool_calls', unconstrained on a model without one); under 'required'
   * or a named function, one call.
   */
  constraint?: OutputConstraint;
  /** Whether the reply may be text ('auto'), so response_format can take the constraint's place. */
  textAllowed: boolean;
  /** Most calls a reply may make: 1 under parallel_tool_calls false. */
  maxCalls: number;
}

/** Throws InvalidRequestError naming the field for a malformed `tools` or `tool_choice`. */
export function planTools(toolsValue: unknown, choiceValue: unknown, parallelValue?: unknown): ToolPlan {
  const tools = checkTools(toolsValue);
  const choice = checkToolChoice(choiceValue, tools);
  if (parallelValue !== undefined && parallelValue !== null && typeof parallelValue !== 'boolean') {
    throw new InvalidRequestError(`parallel_tool_calls must be true or false, got ${JSON.stringify(parallelValue)}`, 'parallel_tool_calls');
  }
  const maxCalls = parallelValue === false ? 1 : Infinity;
  if (choice === 'none' || tools.length === 0) return { tools: [], callable: [], maxCalls, textAllowed: true };
  const names = tools.map((t) => t.function.name);
  if (choice === 'auto') return { tools, callable: names, constraint: { kind: 'tool_calls', tools: JSON.stringify(tools), parallel: maxCalls > 1 }, maxCalls, textAllowed: true };
  const called = choice === 'required' ? tools : tools.filter((t) => t.function.name === choice.name);
  return { tools, callable: called.map((t) => t.function.name), constraint: { kind: 'json_schema', schema: JSON.stringify(callSchema(called)) }, maxCalls, textAllowed: false };
}

/**
 * The JSON Schema of one call to one of `tools`: `{"name": <const>, "arguments": <its parameters>}`,
 * every key required and no other; for several tools, any one of theirs (anyOf).
 */
export function callSchema(tools: readonly ToolDefinition[]): Record<string, unknown> {
  const one = (t: ToolDefinition) => ({
    type: 'object',
    properties: { name: { const: t.function.name }, arguments: t.function.parameters ?? { type: 'object', properties: {} } },
    required: ['name', 'arguments'],
    additionalProperties: false,
  });
  return tools.length === 1 ? one(tools[0]!) : { anyOf: tools.map(one) };
}

function checkTools(value: unknown): ToolDefinition[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidRequestError('tools must be an array of function tools', 'tools');
  if (value.length > MAX_TOOLS) throw new InvalidRequestError(`tools holds ${value.length} tools; at most ${MAX_TOOLS} are allowed`, 'tools');
  const seen = new Set<string>();
  return value.map((tool: unknown, i) => {
    const at = `tools[${i}]`;
    if (!isRecord(tool)) throw new InvalidRequestError(`${at} must be an object { type: 'function', function: { name, ... } }`, at);
    if (tool.type !== 'function') throw new InvalidRequestError(`${at}.type must be 'function' (Cohort serves function tools), got ${JSON.stringify(tool.type) ?? 'nothing'}`, `${at}.type`);
    const fn = tool.function;
    if (!isRecord(fn)) throw new InvalidRequestError(`${at}.function must be an object { name, description?, parameters?, strict? }`, `${at}.function`);
    const { name, description, parameters, strict } = fn;
    if (typeof name !== 'string' || !NAME.test(name)) throw new InvalidRequestError(`${at}.function.name must be 1 to 64 letters, digits, '_' or '-', got ${JSON.stringify(name) ?? 'nothing'}`, `${at}.function.name`);
    if (seen.has(name)) throw new InvalidRequestError(`${at}.function.name '${name}' is already the name of an earlier tool`, `${at}.function.name`);
    seen.add(name);
    if (description !== undefined && typeof description !== 'string') throw new InvalidRequestError(`${at}.function.description must be a string`, `${at}.function.description`);
    if (parameters !== undefined && !isRecord(parameters)) throw new InvalidRequestError(`${at}.function.parameters must be a JSON Schema object`, `${at}.function.parameters`);
    if (strict !== undefined && strict !== null && typeof strict !== 'boolean') throw new InvalidRequestError(`${at}.function.strict must be true, false or null`, `${at}.function.strict`);
    // a copy of what the template and the schema read: nothing else of the caller's object travels
    return {
      type: 'function',
      function: {
        name,
        ...(description !== undefined ? { description } : {}),
        ...(parameters !== undefined ? { parameters: jsonCopy(parameters, `${at}.function.parameters`) } : {}),
        ...(strict !== undefined && strict !== null ? { strict } : {}),
      },
    };
  });
}

function checkToolChoice(value: unknown, tools: readonly ToolDefinition[]): 'none' | 'auto' | 'required' | { name: string } {
  if (value === undefined || value === null) return tools.length > 0 ? 'auto' : 'none';
  if (value === 'none' || value === 'auto') return value;
  if (value === 'required') {
    if (tools.length === 0) throw new InvalidRequestError("tool_choice 'required' needs tools", 'tool_choice');
    return value;
  }
  if (typeof value === 'string') throw new InvalidRequestError(`tool_choice must be 'none', 'auto', 'required' or { type: 'function', function: { name } }, got '${value}'`, 'tool_choice');
  if (!isRecord(value)) throw new InvalidRequestError("tool_choice must be 'none', 'auto', 'required' or { type: 'function', function: { name } }", 'tool_choice');
  if (value.type !== 'function') throw new InvalidRequestError(`tool_choice.type must be 'function', got ${JSON.stringify(value.type) ?? 'nothing'}`, 'tool_choice.type');
  const name = isRecord(value.function) ? value.function.name : undefined;
  if (typeof name !== 'string') throw new InvalidRequestError('tool_choice.function.name must be a string', 'tool_choice.function.name');
  if (!tools.some((t) => t.function.name === name)) throw new InvalidRequestError(`tool_choice names the function '${name}', which is not in tools`, 'tool_choice.function.name');
  return { name };
}

/** A JSON value's deep copy; refuses what JSON cannot hold (a function, a cycle). */
function jsonCopy(value: Record<string, unknown>, param: string): Record<string, unknown> {
  try {
    return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  } catch (err) {
    throw new InvalidRequestError(`${param} must be JSON (${(err as Error).message})`, param);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
