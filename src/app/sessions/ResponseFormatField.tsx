// The response format of a session: free text, any JSON object, or JSON following a schema typed
// in a small editor (or an example picked), with the reason beside it when the text is not a JSON object.
import { useId } from 'react';
import { EXAMPLE_SCHEMAS } from '../derive/example-schemas';
import { jsonSchemaProblem, type ResponseFormatKind, type SessionSettings } from '../derive/session-settings';

const LABELS: Record<ResponseFormatKind, string> = { text: 'Text', json_object: 'JSON object', json_schema: 'JSON schema' };

export function ResponseFormatField({ settings, onChange }: { settings: SessionSettings; onChange: (settings: SessionSettings) => void }) {
  const errorId = useId();
  const problem = settings.responseFormat === 'json_schema' ? jsonSchemaProblem(settings.jsonSchema) : null;
  return (
    <div className="wide response-format">
      <label>
        Response format
        <select data-testid="setting-responseFormat" value={settings.responseFormat} onChange={(e) => onChange({ ...settings, responseFormat: e.target.value as ResponseFormatKind })}>
          {(Object.keys(LABELS) as ResponseFormatKind[]).map((kind) => (
            <option key={kind} value={kind}>
              {LABELS[kind]}
            </option>
          ))}
        </select>
      </label>
      {settings.responseFormat === 'json_schema' && (
        <>
          <label>
            Example schema
            <select
              data-testid="setting-schemaExample"
              value=""
              onChange={(e) => {
                const example = EXAMPLE_SCHEMAS.find((x) => x.label === e.target.value);
                if (example) onChange({ ...settings, jsonSchema: example.schema });
              }}
            >
              <option value="">pick one to replace the schema…</option>
              {EXAMPLE_SCHEMAS.map((x) => (
                <option key={x.label} value={x.label}>
                  {x.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            JSON schema
            <textarea
              className="schema-editor"
              rows={7}
              spellCheck={false}
              data-testid="setting-jsonSchema"
              aria-invalid={problem !== null}
              aria-describedby={problem ? errorId : undefined}
              placeholder='{"type": "object", "properties": {...}}'
              value={settings.jsonSchema}
              onChange={(e) => onChange({ ...settings, jsonSchema: e.target.value })}
            />
          </label>
          {problem && (
            <p className="field-error" id={errorId} role="alert" data-testid="setting-jsonSchema-error">
              {problem}
            </p>
          )}
        </>
      )}
    </div>
  );
}
