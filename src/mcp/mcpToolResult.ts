// A tool's result as the text a model receives; a result the server marks as an error becomes a
// thrown ToolReportedError, told apart from failures of the connection itself.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** The tool ran and reported an error (`isError`): its text is the message, not a failure of the server. */
export class ToolReportedError extends Error {}

/** What the model receives: text parts joined, other parts summarised, structured content when there is no text. */
export function resultText(result: CallToolResult, toolId: string): string {
  const parts: string[] = [];
  let hasText = false;
  for (const part of result.content ?? []) {
    switch (part.type) {
      case 'text':
        hasText = true;
        parts.push(part.text);
        break;
      case 'image':
      case 'audio':
        parts.push(`[${part.type} ${part.mimeType}, ${base64Bytes(part.data)} bytes]`);
        break;
      case 'resource': {
        const r = part.resource;
        if ('text' in r && typeof r.text === 'string') {
          hasText = true;
          parts.push(`[resource ${r.uri}]\n${r.text}`);
        } else parts.push(`[resource ${r.uri}${r.mimeType ? ` ${r.mimeType}` : ''}, ${base64Bytes((r as { blob?: string }).blob ?? '')} bytes]`);
        break;
      }
      case 'resource_link':
        parts.push(`[resource link ${part.uri}${part.name ? ` (${part.name})` : ''}]`);
        break;
      default:
        parts.push(`[${(part as { type?: string }).type ?? 'unknown'} content]`);
    }
  }
  if (!hasText && result.structuredContent !== undefined) parts.unshift(JSON.stringify(result.structuredContent));
  const text = parts.join('\n');
  if (result.isError === true) throw new ToolReportedError(text === '' ? `${toolId} reported an error` : text);
  return text;
}

function base64Bytes(data: string): number {
  const clean = data.replace(/[^A-Za-z0-9+/]/g, '');
  return Math.floor((clean.length * 3) / 4);
}
