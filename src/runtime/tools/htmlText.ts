// HTML made plain text for a model, minimally: scripts, styles and comments dropped, block
// elements as line breaks, links kept as "text (href)", entities decoded, blanks collapsed.
// Not a browser: the point is readable text, not a faithful rendering.

const DROPPED = /<(script|style|noscript|template|svg|head)\b[\s\S]*?<\/\1\s*>/gi;
const BLOCK = /<\/?(?:p|div|br|hr|li|ul|ol|tr|table|section|article|header|footer|nav|main|aside|h[1-6]|pre|blockquote|dd|dt|dl|figure|figcaption|form)\b[^>]*>/gi;
const LINK = /<a\b[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))[^>]*>([\s\S]*?)<\/a\s*>/gi;

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', mdash: '—', ndash: '–', hellip: '…', copy: '©', reg: '®', trade: '™', laquo: '«', raquo: '»' };

export function htmlToText(html: string): string {
  let text = html.replace(/<!--[\s\S]*?-->/g, '').replace(DROPPED, '');
  text = text.replace(LINK, (_, a: string | undefined, b: string | undefined, c: string | undefined, inner: string) => {
    const label = stripTags(inner).trim();
    const href = decodeEntities(a ?? b ?? c ?? '');
    return href === '' || href.startsWith('#') || href.startsWith('javascript:') ? label : `${label} (${href})`;
  });
  text = text.replace(BLOCK, '\n');
  text = decodeEntities(stripTags(text));
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\f\v\r\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function stripTags(html: string): string {
  return html.replace(/<[^>]*>/g, '');
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[name.toLowerCase()] ?? whole;
  });
}
