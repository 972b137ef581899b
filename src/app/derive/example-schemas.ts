// The JSON schemas the response-format editor offers as examples: the extraction preset's two, and
// two that show enums, numbers, arrays and nested objects. Data only.
import { extractSchemaText } from '../../protocol/extract';

export interface ExampleSchema {
  label: string;
  schema: string;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

export const EXAMPLE_SCHEMAS: readonly ExampleSchema[] = [
  { label: 'Person record', schema: extractSchemaText('person') },
  { label: 'Product record', schema: extractSchemaText('product') },
  {
    label: 'Sentiment',
    schema: pretty({
      type: 'object',
      properties: { sentiment: { enum: ['positive', 'neutral', 'negative'] }, confidence: { type: 'number', minimum: 0, maximum: 1 } },
      required: ['sentiment', 'confidence'],
      additionalProperties: false,
    }),
  },
  {
    label: 'To-do list',
    schema: pretty({
      type: 'object',
      properties: {
        title: { type: 'string' },
        items: { type: 'array', items: { type: 'object', properties: { task: { type: 'string' }, done: { type: 'boolean' } }, required: ['task', 'done'], additionalProperties: false } },
      },
      required: ['title', 'items'],
      additionalProperties: false,
    }),
  },
];
