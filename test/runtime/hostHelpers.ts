// Shared by the tests of hosted sessions (test/runtime/sessionHost.test.ts, test/vscode/chat*.test.ts).
import { z } from 'zod';
import { tool } from '../../src/runtime/tools/tools.js';

/** Resolves once `check` holds; rejects after 5 s naming `what`. */
export function until(check: () => boolean, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = (): void => {
      if (check()) resolve();
      else if (Date.now() - started > 5000) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(poll, 5);
    };
    poll();
  });
}

/** A client tool `note` that records each text it is given in `ran`. */
export function noteTool(ran: string[]) {
  return tool({ name: 'note', description: 'writes a note', inputSchema: z.object({ text: z.string() }) }, (i) => {
    ran.push(i.text);
    return { ok: true };
  });
}
