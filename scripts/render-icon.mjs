// `node scripts/render-icon.mjs`: renders scripts/icon.svg (drawn by hand) to media/icon.png, the
// 128×128 icon of the extension list and the marketplace, with Debian's chromium through
// playwright-core. `--preview <file.png>` also writes a sheet of both icons (icon.png's drawing and the
// activity bar's shield.svg, tinted as VS Code tints it: the SVG as a mask) at 16, 24, 32 and 128 px
// on a dark and a light background, to look at before committing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

const root = path.join(import.meta.dirname, '..');
const media = path.join(root, 'media');
const executablePath = process.env.AGENT_POLICY_E2E_CHROMIUM || '/usr/bin/chromium';
const previewAt = process.argv.indexOf('--preview');
const dataUrl = (file) => `data:image/svg+xml;base64,${fs.readFileSync(file).toString('base64')}`;
const drawing = path.join(import.meta.dirname, 'icon.svg');
const activityBar = path.join(media, 'shield.svg');

const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 }, deviceScaleFactor: 1 });
  await page.setContent(`<body style="margin:0;background:transparent"><img src="${dataUrl(drawing)}" width="128" height="128"></body>`);
  await page.screenshot({ path: path.join(media, 'icon.png'), omitBackground: true, clip: { x: 0, y: 0, width: 128, height: 128 } });
  console.log('wrote media/icon.png');

  if (previewAt > 0) {
    const sizes = [16, 24, 32, 128];
    const row = (background, tint) => `<div style="background:${background};padding:8px;display:flex;gap:12px;align-items:center">${sizes
      .map((s) => `<img src="${dataUrl(drawing)}" width="${s}" height="${s}">`).join('')}${sizes
      .map((s) => `<div style="width:${s}px;height:${s}px;background:${tint};-webkit-mask:url('${dataUrl(activityBar)}') center/contain no-repeat"></div>`).join('')}</div>`;
    await page.setViewportSize({ width: 720, height: 320 });
    await page.setContent(`<body style="margin:0">${row('#1e1e1e', '#cccccc')}${row('#f3f3f3', '#424242')}</body>`);
    await page.screenshot({ path: process.argv[previewAt + 1], fullPage: true });
    console.log(`wrote ${process.argv[previewAt + 1]}`);
  }
} finally {
  await browser.close();
}
