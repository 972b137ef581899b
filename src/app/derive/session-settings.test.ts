// The settings' mapping to session options (response format -> constraint, penalties, bias,
// logprobs), the form's checks with their messages, and reading saved settings old and new.
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, formatSummary, jsonSchemaProblem, parseLogitBias, readSettings, sameSettings, settingsProblems, toSessionOptions, type SessionSettings } from './session-settings';
import { nextRecord, readPaneRecord } from './pane-records';

const SCHEMA = '{\n  "type": "object",\n  "properties": { "name": { "type": "string" } },\n  "required": ["name"]\n}';

describe('response format', () => {
  it('text asks for no constraint; JSON object and JSON schema ask for theirs, the schema in one spelling', () => {
    expect(toSessionOptions(DEFAULT_SETTINGS).sampling).not.toHaveProperty('constraint');
    expect(toSessionOptions({ ...DEFAULT_SETTINGS, responseFormat: 'json_object', jsonSchema: 'not even json' }).sampling?.constraint).toEqual({ kind: 'json_object' });
    expect(toSessionOptions({ ...DEFAULT_SETTINGS, responseFormat: 'json_schema', jsonSchema: SCHEMA }).sampling?.constraint).toEqual({
      kind: 'json_schema',
      schema: '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}',
    });
    // a schema typed while another format is picked is kept and asks for nothing
    expect(toSessionOptions({ ...DEFAULT_SETTINGS, responseFormat: 'text', jsonSchema: '{' }).sampling).not.toHaveProperty('constraint');
  });

  it('says what is wrong with a schema that is empty, not JSON, or JSON but not an object', () => {
    expect(jsonSchemaProblem(SCHEMA)).toBeNull();
    expect(jsonSchemaProblem('  ')).toMatch(/empty/);
    expect(jsonSchemaProblem('{"type": "object",}')).toMatch(/^The JSON schema is not valid JSON: /);
    expect(jsonSchemaProblem('[1, 2]')).toBe('A JSON schema is a JSON object, not an array.');
    expect(jsonSchemaProblem('"object"')).toBe('A JSON schema is a JSON object, not a string.');
    expect(jsonSchemaProblem('null')).toBe('A JSON schema is a JSON object, not null.');
  });

  it('a send with a bad schema fails with the reason, naming the response format', () => {
    expect(() => toSessionOptions({ ...DEFAULT_SETTINGS, responseFormat: 'json_schema', jsonSchema: '{"a":' })).toThrow(/^Response format: The JSON schema is not valid JSON/);
    expect(settingsProblems({ ...DEFAULT_SETTINGS, responseFormat: 'json_schema', jsonSchema: '' })).toEqual({ jsonSchema: 'The JSON schema is empty: type one or pick an example.' });
    expect(settingsProblems({ ...DEFAULT_SETTINGS, responseFormat: 'text', jsonSchema: '' })).toEqual({});
  });
});

describe('penalties, logit bias and logprobs', () => {
  it('leaves neutral values out and passes set ones', () => {
    const neutral = toSessionOptions(DEFAULT_SETTINGS).sampling!;
    for (const key of ['frequencyPenalty', 'presencePenalty', 'repetitionPenalty', 'logitBias', 'logprobs']) expect(neutral).not.toHaveProperty(key);
    const set: SessionSettings = { ...DEFAULT_SETTINGS, frequencyPenalty: 0.5, presencePenalty: -1, repetitionPenalty: 1.3, logitBias: '13: -100, 42:5.5', logprobs: 0 };
    expect(toSessionOptions(set).sampling).toMatchObject({ frequencyPenalty: 0.5, presencePenalty: -1, repetitionPenalty: 1.3, logitBias: { 13: -100, 42: 5.5 }, logprobs: 0 });
  });

  it('reads logit bias pairs and names the first bad one', () => {
    expect(parseLogitBias('')).toEqual({ bias: {} });
    expect(parseLogitBias(' 7 : 3 ,, 8:-2 ')).toEqual({ bias: { 7: 3, 8: -2 } });
    expect(parseLogitBias('7: 3, eight: 2')).toEqual({ error: 'Logit bias pair 2 ("eight: 2") is not "token id: bias" (e.g. "13: -100").' });
    expect(parseLogitBias('7: 101')).toEqual({ error: 'Logit bias pair 1: bias 101 is outside -100..100.' });
    expect(parseLogitBias('7: 1, 7: 2')).toEqual({ error: 'Logit bias pair 2: token 7 is named twice.' });
    expect(() => toSessionOptions({ ...DEFAULT_SETTINGS, logitBias: '-3: 1' })).toThrow(/Logit bias pair 1/);
    expect(settingsProblems({ ...DEFAULT_SETTINGS, logitBias: 'x' }).logitBias).toMatch(/Logit bias pair 1/);
  });

  it('the pane summary names what is on', () => {
    expect(formatSummary(DEFAULT_SETTINGS)).toBe('');
    expect(formatSummary({ ...DEFAULT_SETTINGS, responseFormat: 'json_schema', logprobs: 5, presencePenalty: 1, logitBias: '1: 2' })).toBe(' · JSON schema · logprobs (top 5) · penalties · logit bias');
  });

  it('settings differ when any field does, speculation compared by value', () => {
    expect(sameSettings(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS })).toBe(true);
    expect(sameSettings({ ...DEFAULT_SETTINGS, speculation: { maxDraftTokens: 3 } }, { ...DEFAULT_SETTINGS, speculation: { maxDraftTokens: 3 } })).toBe(true);
    expect(sameSettings(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, jsonSchema: '{}' })).toBe(false);
    expect(sameSettings(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, logprobs: 0 })).toBe(false);
  });
});

describe('saved settings', () => {
  const full: SessionSettings = { ...DEFAULT_SETTINGS, frequencyPenalty: 0.2, presencePenalty: 0.1, repetitionPenalty: 1.1, logitBias: '5: -100', responseFormat: 'json_schema', jsonSchema: SCHEMA, logprobs: 7 };

  it('come back through a pane record as they were saved', () => {
    const record = nextRecord('p1', { label: '#1', settings: full, lines: [] }, undefined, 10)!;
    const read = readPaneRecord(JSON.parse(JSON.stringify(record)));
    expect(read).toMatchObject({ settings: full });
  });

  it('a record saved before these fields existed still loads, each missing field at its default', () => {
    const old = { systemPrompt: 'be brief', temperature: 0.3, topP: 0.9, topK: 20, maxNewTokens: 64, seed: 4, speculation: 'off' };
    expect(readSettings(old)).toEqual({ ...DEFAULT_SETTINGS, ...old });
    const record = readPaneRecord({ version: 2, paneId: 'p3', label: '#3', settings: old, lines: [{ role: 'user', text: 'hi' }], rev: 2, savedAtMs: 1 });
    expect(record).toMatchObject({ paneId: 'p3', settings: { ...DEFAULT_SETTINGS, ...old } });
  });

  it('malformed fields take their defaults', () => {
    expect(readSettings({ ...full, responseFormat: 'yaml', logprobs: 21, frequencyPenalty: 'high', jsonSchema: 3, logitBias: null })).toEqual({
      ...full,
      responseFormat: 'text',
      logprobs: null,
      frequencyPenalty: 0,
      jsonSchema: '',
      logitBias: '',
    });
  });
});
