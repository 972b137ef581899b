// What an empty pane says before its first message: with the embedded model, what it can and
// cannot do and a one-click example it answers well (it fills the composer; nothing is sent).
import { buildExample, EXAMPLE_PROMPTS, EXAMPLE_SETTINGS, isEmbeddedModel } from '../derive/example-prompts';
import { useModelStore } from '../state/model-store';
import { updateSettings } from '../state/session-actions';
import { useSessionsStore } from '../state/sessions-store';

export function EmptyPaneHint({ paneId, editable }: { paneId: string; editable: boolean }) {
  const embedded = useModelStore((s) => isEmbeddedModel(s.model?.name));
  if (!embedded) return <p className="muted small empty-hint">Type a message below.</p>;
  const example = EXAMPLE_PROMPTS[0];
  return (
    <div className="empty-hint small">
      <p className="muted">cohort-tiny finds a code hidden in a long text; it cannot chat.</p>
      <button
        type="button"
        className="link"
        data-testid="pane-example"
        onClick={() => {
          // Greedy and short is how the model was trained to answer; settings can still change.
          if (editable) updateSettings(paneId, EXAMPLE_SETTINGS);
          const { prompt } = buildExample(example, Math.floor(Math.random() * 0x7fffffff));
          useSessionsStore.getState().updateView(paneId, (v) => ({ ...v, returnedDraft: prompt }));
        }}
      >
        Try an example: {example.label.toLowerCase()}
      </button>
    </div>
  );
}
