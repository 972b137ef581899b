// Drag-and-drop of model files anywhere on the page: an overlay while files hover, a load when
// they land. Ignores drags that carry no files (text, links).
import { useEffect, useState } from 'react';
import { droppedFiles, loadLocalFiles } from './local-files';

const carriesFiles = (event: DragEvent) => Array.from(event.dataTransfer?.types ?? []).includes('Files');

export function DropZone() {
  const [active, setActive] = useState(false);
  useEffect(() => {
    let depth = 0;
    const enter = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      depth++;
      setActive(true);
    };
    const over = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    };
    const leave = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setActive(false);
    };
    const drop = (e: DragEvent) => {
      if (!e.dataTransfer || !carriesFiles(e)) return;
      e.preventDefault();
      depth = 0;
      setActive(false);
      void droppedFiles(e.dataTransfer).then(loadLocalFiles);
    };
    window.addEventListener('dragenter', enter);
    window.addEventListener('dragover', over);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragenter', enter);
      window.removeEventListener('dragover', over);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
    };
  }, []);
  if (!active) return null;
  return (
    <div className="drop-overlay" data-testid="drop-overlay">
      <div>Drop a .gguf file or a Hugging Face model folder to load it</div>
    </div>
  );
}
