// Twenty JSON Schemas for the constraint tests and bench: nested objects, arrays, enums, numbers,
// required and optional fields. Strings carry a bounded pattern and arrays maxItems so that a random-weight
// model's replies end (not maxLength: XGrammar 0.1.27's maxLength strings admit raw control
// characters, which JSON.parse refuses). Test data only.
export const JSON_SCHEMAS: Record<string, object> = {
  person: { type: 'object', properties: { name: { type: 'string', pattern: '^[a-z ]{0,8}$' }, age: { type: 'integer', minimum: 0, maximum: 120 } }, required: ['name', 'age'] },
  flag: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  color: { type: 'object', properties: { color: { enum: ['red', 'green', 'blue'] } }, required: ['color'] },
  point: { type: 'object', properties: { x: { type: 'integer', minimum: -50, maximum: 50 }, y: { type: 'integer', minimum: -50, maximum: 50 } }, required: ['x', 'y'] },
  tags: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string', pattern: '^[a-z ]{0,4}$' }, maxItems: 3 } }, required: ['tags'] },
  nested: {
    type: 'object',
    properties: { user: { type: 'object', properties: { id: { type: 'integer', minimum: 1, maximum: 999 }, role: { enum: ['admin', 'guest'] } }, required: ['id', 'role'] } },
    required: ['user'],
  },
  optional: { type: 'object', properties: { title: { type: 'string', pattern: '^[a-z ]{0,6}$' }, note: { type: 'string', pattern: '^[a-z ]{0,6}$' } }, required: ['title'] },
  scores: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 100 }, minItems: 1, maxItems: 4 },
  status: { enum: ['ok', 'fail', 'retry'] },
  count: { type: 'integer', minimum: 0, maximum: 10000 },
  grid: { type: 'object', properties: { rows: { type: 'array', items: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 9 }, maxItems: 3 }, maxItems: 2 } }, required: ['rows'] },
  invoice: {
    type: 'object',
    properties: {
      currency: { enum: ['EUR', 'USD'] },
      lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string', pattern: '^[a-z ]{0,5}$' }, qty: { type: 'integer', minimum: 1, maximum: 9 } }, required: ['sku', 'qty'] }, maxItems: 2 },
    },
    required: ['currency', 'lines'],
  },
  event: { type: 'object', properties: { kind: { const: 'click' }, at: { type: 'integer', minimum: 0, maximum: 99999 } }, required: ['kind', 'at'] },
  answer: { type: 'object', properties: { answer: { enum: ['yes', 'no'] }, confidence: { enum: [1, 2, 3] } }, required: ['answer', 'confidence'] },
  nullable: { type: 'object', properties: { value: { type: ['integer', 'null'], minimum: 0, maximum: 99 } }, required: ['value'] },
  choice: { anyOf: [{ type: 'object', properties: { a: { type: 'integer', minimum: 0, maximum: 9 } }, required: ['a'] }, { type: 'object', properties: { b: { type: 'boolean' } }, required: ['b'] }] },
  address: {
    type: 'object',
    properties: { street: { type: 'string', pattern: '^[a-z ]{0,6}$' }, zip: { type: 'string', pattern: '^[0-9]{5}$' }, country: { enum: ['DE', 'FR', 'US'] } },
    required: ['street', 'zip', 'country'],
  },
  matrix: { type: 'array', items: { type: 'array', items: { type: 'boolean' }, minItems: 2, maxItems: 2 }, minItems: 2, maxItems: 2 },
  extraction: {
    type: 'object',
    properties: {
      name: { type: 'string', pattern: '^[a-z ]{0,6}$' },
      emails: { type: 'array', items: { type: 'string', pattern: '^[a-z ]{0,6}$' }, maxItems: 2 },
      company: { type: 'object', properties: { name: { type: 'string', pattern: '^[a-z ]{0,6}$' }, size: { enum: ['small', 'large'] } }, required: ['name'] },
    },
    required: ['name', 'emails', 'company'],
  },
  weather: { type: 'object', properties: { city: { type: 'string', pattern: '^[a-z ]{0,6}$' }, unit: { enum: ['C', 'F'] }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city', 'unit'] },
};
