// The empty grid's welcome: what the serving model does (for the embedded one, its skills and
// limits) and one-click examples it answers well, each opening a greedy pane and sending.
import { buildExample, EMBEDDED_MODEL_SKILLS, EXAMPLE_PROMPTS, EXAMPLE_SETTINGS, isEmbeddedModel, type ExamplePrompt } from '../derive/example-prompts';
import { useModelStore } from '../state/model-store';
import { addSessions, sendMessage } from '../state/session-actions';

function runExample(example: ExamplePrompt): void {
  const [paneId] = addSessions(1, EXAMPLE_SETTINGS);
  void sendMessage(paneId, buildExample(example, Math.floor(Math.random() * 0x7fffffff)).prompt);
}

export function ExamplePrompts() {
  const model = useModelStore((s) => s.model);
  const embedded = isEmbeddedModel(model?.name);
  return (
    <div className="welcome" data-testid="welcome">
      {embedded && (
        <p className="skills" data-testid="model-skills">
          {EMBEDDED_MODEL_SKILLS}
        </p>
      )}
      {embedded && (
        <div className="row examples">
          {EXAMPLE_PROMPTS.map((example) => (
            <button key={example.id} type="button" className="primary" data-testid={`example-${example.id}`} onClick={() => runExample(example)}>
              {example.label} (~{example.tokens.toLocaleString('en-US')} tokens)
            </button>
          ))}
        </div>
      )}
      <p className="muted">
        {model ? 'Or add sessions above and type; ' : 'The model is loading; then add sessions above. '}
        every session you send to rides in the same batched forward pass, and the activity panel below shows each step.
      </p>
    </div>
  );
}
