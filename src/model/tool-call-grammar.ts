// The XGrammar structural tag that holds tool_choice 'auto' to a model's own call format: free text
// until a call opens, then the call to one tool's parameters and its close. Not compiling it (xgrammar.ts).
import type { StructuralTag, TagFormat } from '@mlc-ai/web-xgrammar';
import type { ToolDefinition } from '../engine/types';
import { TOOL_CALL_FORMATS, callPrefix, callSuffix, type ToolCallFormatName } from '../protocol/tool-call-format';

/** A reply's first character that is neither whitespace nor '{' (the JSON formats' text replies). */
const TEXT_OPENING = '[ \\t\\n\\r]*[^{ \\t\\n\\r]';

/**
 * The structural tag for calls to `tools`, each tag `callPrefix` + its arguments + `callSuffix`, the
 * arguments held to `argumentGrammars[i]` (EBNF of tool i's parameters, as json_schema compiles them).
 * A tagged format (hermes) triggers on its open tag anywhere in the text, and text resumes after the
 * close. A JSON format's call is the reply, as the parser reads it: the reply is calls (one per
 * line) or text that does not open with '{'. `parallel` false: the reply ends after one call.
 */
export function toolCallsStructuralTag(formatName: ToolCallFormatName, tools: readonly ToolDefinition[], argumentGrammars: readonly string[], parallel: boolean): StructuralTag {
  const format = TOOL_CALL_FORMATS[formatName];
  const tags: TagFormat[] = tools.map((tool, i) => ({
    type: 'tag',
    begin: callPrefix(format, tool.function.name),
    content: { type: 'grammar', grammar: argumentGrammars[i]! },
    end: callSuffix(format),
  }));
  if (format.open) {
    return { type: 'structural_tag', format: { type: 'triggered_tags', triggers: [format.open], tags, stop_after_first: !parallel } };
  }
  return {
    type: 'structural_tag',
    format: {
      type: 'or',
      elements: [
        { type: 'tags_with_separator', tags, separator: format.separator, at_least_one: true, stop_after_first: !parallel },
        { type: 'sequence', elements: [{ type: 'regex', pattern: TEXT_OPENING }, { type: 'any_text' }] },
      ],
    },
  };
}

/** A tool's parameters as the schema its arguments are held to (none given: an empty object, as 'required' holds them). */
export function parametersSchema(tool: ToolDefinition): Record<string, unknown> {
  return tool.function.parameters ?? { type: 'object', properties: {} };
}
