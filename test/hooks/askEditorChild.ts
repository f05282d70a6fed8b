// A hook in its own process for test/hooks/editorBridge.test.ts: finds the editor for a folder
// and asks it, printing the answer as JSON ("none" when there is no editor or no answer).
// Arguments: the folder, the bridge directory, the ask as JSON, the deadline in ms from now.
import { askEditor, findEditor, type EditorAsk } from '../../src/hooks/editor/editorBridge.js';

const [folder, directory, askJson, within] = process.argv.slice(2);
const editor = findEditor(folder!, { directories: [directory!] });
if (!editor) {
  process.stdout.write('"none"\n');
} else {
  process.stdout.write('asking\n');
  void askEditor(editor, JSON.parse(askJson!) as EditorAsk, Date.now() + Number(within)).then((answer) => {
    process.stdout.write(`${JSON.stringify(answer ?? 'none')}\n`);
  });
}
