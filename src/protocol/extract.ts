// The extraction task as data: seeded short documents (a person's or a product's record in
// prose), the one JSON schema their fields go to, and the check of a reply against the record. No engine, no DOM.
import { mulberry32 } from '../engine/seeded-random';

export type ExtractKind = 'person' | 'product';
export const EXTRACT_KINDS: readonly ExtractKind[] = ['person', 'product'];

/** A field's value as the document states it: text, or an integer / a number. */
export type ExtractValue = string | number;

interface FieldSpec {
  name: string;
  type: 'string' | 'integer' | 'number';
}

const FIELDS: Record<ExtractKind, FieldSpec[]> = {
  person: [
    { name: 'name', type: 'string' },
    { name: 'age', type: 'integer' },
    { name: 'city', type: 'string' },
    { name: 'occupation', type: 'string' },
    { name: 'email', type: 'string' },
  ],
  product: [
    { name: 'product', type: 'string' },
    { name: 'maker', type: 'string' },
    { name: 'category', type: 'string' },
    { name: 'price', type: 'number' },
    { name: 'in_stock', type: 'integer' },
  ],
};

/** The kind's JSON Schema: every field required, nothing else allowed. */
export function extractSchema(kind: ExtractKind): Record<string, unknown> {
  const fields = FIELDS[kind];
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map((f) => [f.name, { type: f.type }])),
    required: fields.map((f) => f.name),
    additionalProperties: false,
  };
}

/** The schema as the text a response format carries (two-space indented, as the editor shows it). */
export function extractSchemaText(kind: ExtractKind): string {
  return JSON.stringify(extractSchema(kind), null, 2);
}

export interface ExtractCase {
  kind: ExtractKind;
  /** The user message: the instruction, then the document. */
  prompt: string;
  /** The record's fields as the document states them. */
  expected: Record<string, ExtractValue>;
}

const FIRST = ['Maria', 'James', 'Aiko', 'Omar', 'Lena', 'Tomas', 'Priya', 'Kwame', 'Sofia', 'Mateo', 'Ingrid', 'Ravi'];
const LAST = ['Santos', 'Walker', 'Tanaka', 'Haddad', 'Fischer', 'Novak', 'Iyer', 'Mensah', 'Rossi', 'Garcia', 'Berg', 'Kapoor'];
const CITIES = ['Lisbon', 'Leeds', 'Osaka', 'Amman', 'Hamburg', 'Brno', 'Chennai', 'Accra', 'Turin', 'Seville', 'Bergen', 'Pune'];
const JOBS = ['nurse', 'carpenter', 'architect', 'teacher', 'pilot', 'chemist', 'librarian', 'baker', 'surveyor', 'translator'];
const PRODUCTS = ['Aurora X2', 'Tern 40', 'Quill Pro', 'Basalt One', 'Nimbus S', 'Harbor 7', 'Vela Mini', 'Cobalt Duo'];
const MAKERS = ['Nordwind', 'Kestrel Works', 'Lumen & Co', 'Oakridge', 'Tidewater', 'Fenmark'];
const CATEGORIES = ['kettle', 'desk lamp', 'backpack', 'headphones', 'blender', 'bicycle light', 'thermos', 'keyboard'];

const pick = <T,>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

function personCase(random: () => number): ExtractCase {
  const first = pick(random, FIRST);
  const last = pick(random, LAST);
  const expected = { name: `${first} ${last}`, age: 21 + Math.floor(random() * 50), city: pick(random, CITIES), occupation: pick(random, JOBS), email: `${first}.${last}@example.org`.toLowerCase() };
  const sentences = [
    `${expected.name} is ${expected.age} years old and works as a ${expected.occupation}.`,
    `${first} lives in ${expected.city}.`,
    `Mail for ${first} goes to ${expected.email}.`,
  ];
  return { kind: 'person', expected, prompt: instruction('person', shuffle(random, sentences).join(' ')) };
}

function productCase(random: () => number): ExtractCase {
  const expected = { product: pick(random, PRODUCTS), maker: pick(random, MAKERS), category: pick(random, CATEGORIES), price: Math.round((10 + Math.floor(random() * 190) + pick(random, [0, 0.5, 0.99])) * 100) / 100, in_stock: Math.floor(random() * 500) };
  const sentences = [
    `The ${expected.product} is a ${expected.category} made by ${expected.maker}.`,
    `It sells for ${expected.price} dollars.`,
    `The warehouse holds ${expected.in_stock} of them.`,
  ];
  return { kind: 'product', expected, prompt: instruction('product', shuffle(random, sentences).join(' ')) };
}

function instruction(kind: ExtractKind, document: string): string {
  return `Extract the ${kind}'s ${FIELDS[kind].map((f) => f.name).join(', ')} from this record, as JSON.\n\n${document}`;
}

function shuffle<T>(random: () => number, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** n documents of one kind from a seed (the same seed, the same documents); no two share a first field. */
export function makeExtractSuite(seed: number, n: number, kind: ExtractKind): ExtractCase[] {
  if (!Number.isInteger(n) || n < 1) throw new Error(`extraction needs at least one document, not ${n}`);
  const random = mulberry32(seed);
  const make = kind === 'person' ? personCase : productCase;
  const cases: ExtractCase[] = [];
  const seen = new Set<ExtractValue>();
  // The lists hold fewer distinct first fields than a large n: past them, repeats are allowed.
  for (let tries = 0; cases.length < n; tries++) {
    const c = make(random);
    const key = Object.values(c.expected)[0]!;
    if (seen.has(key) && tries < 50 * n) continue;
    seen.add(key);
    cases.push(c);
  }
  return cases;
}

export interface ExtractVerdict {
  /** The reply parses as JSON. */
  parsed: boolean;
  /** It is an object with every field of the schema, each of its type, and no other. */
  matchesSchema: boolean;
  /** Fields whose value is the document's (text compared trimmed and case-insensitively). */
  numCorrect: number;
  numFields: number;
}

function hasType(value: unknown, type: FieldSpec['type']): boolean {
  if (type === 'string') return typeof value === 'string';
  if (type === 'integer') return Number.isInteger(value);
  return typeof value === 'number' && Number.isFinite(value);
}

/** The reply against the record its document states. */
export function judgeExtraction(kind: ExtractKind, reply: string, expected: Readonly<Record<string, ExtractValue>>): ExtractVerdict {
  const fields = FIELDS[kind];
  let value: unknown;
  try {
    value = JSON.parse(reply);
  } catch {
    return { parsed: false, matchesSchema: false, numCorrect: 0, numFields: fields.length };
  }
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  const matchesSchema = record !== null && fields.every((f) => hasType(record[f.name], f.type)) && Object.keys(record).every((k) => fields.some((f) => f.name === k));
  const same = (got: unknown, want: ExtractValue) => (typeof want === 'string' ? typeof got === 'string' && got.trim().toLowerCase() === want.toLowerCase() : got === want);
  const numCorrect = record ? fields.filter((f) => same(record[f.name], expected[f.name]!)).length : 0;
  return { parsed: true, matchesSchema, numCorrect, numFields: fields.length };
}
