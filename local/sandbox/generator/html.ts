/**
 * Rich-text content as Azure DevOps stores it: what its editor produces (div/p blocks, inline formatting,
 * nested lists, tables with spans, code, links, mentions, work item references, pasted images), plus what
 * people paste from Word and Outlook. Generated lazily per item from the seed; `baseUrl` is the host the
 * sandbox is reached on, so inline images point back at it.
 */
import type { Random } from '../common/random.ts';
import { mix, Purpose, rngFor } from './hash.ts';
import { CODE_SNIPPETS, COMPONENTS, EMOJI, SENTENCES } from './text.ts';
import type { AdoAttachment, AdoWorkItem, AdoWorld } from './types.ts';

export interface HtmlContext {
  world: AdoWorld;
  baseUrl: string;
  rnd: Random;
  /** The item the text belongs to (references point at other items). */
  itemId: number;
}

const escapeHtml = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

export function attachmentUrl(world: AdoWorld, baseUrl: string, att: AdoAttachment): string {
  return `${baseUrl}/${encodeURIComponent(world.org)}/${world.projectId}/_apis/wit/attachments/${att.id}?fileName=${encodeURIComponent(att.name)}`;
}

export function mention(ctx: HtmlContext): string {
  const p = ctx.rnd.pick(ctx.world.people);
  return `<a href="#" data-vss-mention="version:2.0,${p.adoId}">@${escapeHtml(p.displayName)}</a>`;
}

function workItemRef(ctx: HtmlContext): string {
  const n = ctx.world.workItems.length;
  const target = ctx.rnd.int(1, Math.max(1, n));
  if (ctx.rnd.chance(0.4)) return `#${target}`;
  const url = `${ctx.baseUrl}/${encodeURIComponent(ctx.world.org)}/${encodeURIComponent(ctx.world.project)}/_workitems/edit/${target}/`;
  return `<a href="${url}" data-vss-mention="version:1.0">#${target}</a>`;
}

/** A sentence with some inline formatting, entities, links, mentions or emoji mixed in. */
function inline(ctx: HtmlContext): string {
  const r = ctx.rnd;
  // The sentences carry literal markup-like text (e.g. <code>) on purpose: escape, then re-add real tags.
  let text = escapeHtml(r.pick(SENTENCES)).replace('&lt;code&gt;null&lt;/code&gt;', '<code>null</code>');
  const x = r.next();
  if (x < 0.12) text = `<b>${text}</b>`;
  else if (x < 0.18) text = `<strong>${text}</strong>`;
  else if (x < 0.24) text = `<i>${text}</i>`;
  else if (x < 0.28) text = `<em>${text}</em>`;
  else if (x < 0.32) text = `<u>${text}</u>`;
  else if (x < 0.35) text = `<strike>${text}</strike>`;
  else if (x < 0.37) text = `<s>${text}</s>`;
  else if (x < 0.41) text = `<span style="color:rgb(255, 0, 0);">${text}</span>`;
  else if (x < 0.43) text = `<span style="background-color:rgb(255, 255, 0);"><b><i>${text}</i></b></span>`;
  const y = r.next();
  if (y < 0.1) text += ` ${mention(ctx)}`;
  else if (y < 0.16) text += ` See ${workItemRef(ctx)}.`;
  else if (y < 0.22)
    text += ` <a href="https://docs.contoso.example.com/${r.pick(COMPONENTS).replaceAll(' ', '-')}?v=2&amp;lang=en">docs</a>`;
  else if (y < 0.28) text += ` ${r.pick(EMOJI)}`;
  else if (y < 0.31) text += '&nbsp;&nbsp;(&quot;quoted&quot; &amp; &lt;angled&gt; &#39;apostrophe&#39;)';
  else if (y < 0.33) text += ' Ünïcödé: 日本語, Ελληνικά, עברית.';
  return text;
}

function paragraph(ctx: HtmlContext): string {
  const parts = Array.from({ length: ctx.rnd.int(1, 3) }, () => inline(ctx));
  const body = ctx.rnd.chance(0.15) ? parts.join('<br>') : parts.join(' ');
  return ctx.rnd.chance(0.6) ? `<div>${body}</div>` : `<p>${body}</p>`;
}

function list(ctx: HtmlContext, depth: number): string {
  const tag = ctx.rnd.chance(0.5) ? 'ul' : 'ol';
  const items = Array.from({ length: ctx.rnd.int(2, 4) }, () => {
    const nested = depth < 3 && ctx.rnd.chance(0.25) ? list(ctx, depth + 1) : '';
    return `<li>${inline(ctx)}${nested}</li>`;
  });
  return `<${tag}>${items.join('')}</${tag}>`;
}

function table(ctx: HtmlContext): string {
  const r = ctx.rnd;
  const cols = r.int(2, 4);
  const rows = r.int(2, 5);
  const cell = 'style="border:1px solid rgb(0, 0, 0);padding:4px;"';
  const head = `<tr>${Array.from({ length: cols }, (_, c) => `<th ${cell}>Column ${c + 1}</th>`).join('')}</tr>`;
  const body: string[] = [];
  let rowspanLeft = 0;
  for (let i = 0; i < rows; i++) {
    const cells: string[] = [];
    let c = rowspanLeft > 0 ? 1 : 0;
    if (rowspanLeft > 0) rowspanLeft--;
    while (c < cols) {
      if (i === 0 && c === 0 && r.chance(0.3)) {
        cells.push(`<td rowspan="2" ${cell}>${escapeHtml(r.pick(COMPONENTS))}</td>`);
        rowspanLeft = 1;
        c++;
      } else if (c < cols - 1 && r.chance(0.15)) {
        cells.push(`<td colspan="2" ${cell}>${inline(ctx)}</td>`);
        c += 2;
      } else {
        cells.push(`<td ${cell}>${r.chance(0.2) ? '' : escapeHtml(String(r.int(1, 999)))}</td>`);
        c++;
      }
    }
    body.push(`<tr>${cells.join('')}</tr>`);
  }
  return `<table style="border-collapse:collapse;width:100%;"><tbody>${head}${body.join('')}</tbody></table>`;
}

function code(ctx: HtmlContext): string {
  return `<pre><code>${escapeHtml(ctx.rnd.pick(CODE_SNIPPETS))}</code></pre>`;
}

function heading(ctx: HtmlContext): string {
  const level = ctx.rnd.int(1, 3);
  return `<h${level}>${escapeHtml(ctx.rnd.pick(['Background', 'Scope', 'Open questions', 'Notes', 'Rollout plan']))}</h${level}>`;
}

function empty(ctx: HtmlContext): string {
  return ctx.rnd.pick(['<div><br></div>', '<p></p>', '<p>&nbsp;</p>', '<div></div>']);
}

/** What Word and Outlook put on the clipboard. */
function pastedOffice(ctx: HtmlContext): string {
  const p = ctx.rnd.pick(ctx.world.people);
  const font = `style='font-size:11.0pt;font-family:"Calibri",sans-serif;color:#1F497D'`;
  if (ctx.rnd.chance(0.5)) {
    return (
      `<p class=MsoNormal><span ${font}>${escapeHtml(ctx.rnd.pick(SENTENCES))}<o:p></o:p></span></p>` +
      `<p class=MsoNormal><o:p>&nbsp;</o:p></p>` +
      `<p class=MsoNormal><b><span lang=EN-US ${font}>Kind regards,</span></b><span lang=EN-US ${font}><br>${escapeHtml(p.displayName)}<o:p></o:p></span></p>`
    );
  }
  return (
    `<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm">` +
    `<p class=MsoNormal><b><span lang=EN-US>From:</span></b><span lang=EN-US> ${escapeHtml(p.displayName)} &lt;${p.email}&gt;<br><b>Sent:</b> Tuesday, 5 March 2024 09:14<br><b>Subject:</b> RE: ${escapeHtml(ctx.rnd.pick(COMPONENTS))} problem<o:p></o:p></span></p></div>` +
    `<p class=MsoNormal>${escapeHtml(ctx.rnd.pick(SENTENCES))}<o:p></o:p></p>`
  );
}

function image(ctx: HtmlContext, att: AdoAttachment): string {
  const style = ctx.rnd.chance(0.5) ? ' style="width:600px;"' : '';
  return `<div><img src="${attachmentUrl(ctx.world, ctx.baseUrl, att)}" alt="Image"${style}></div>`;
}

function block(ctx: HtmlContext): string {
  const x = ctx.rnd.next();
  if (x < 0.4) return paragraph(ctx);
  if (x < 0.55) return list(ctx, 1);
  if (x < 0.63) return table(ctx);
  if (x < 0.7) return code(ctx);
  if (x < 0.78) return heading(ctx);
  if (x < 0.86) return empty(ctx);
  if (x < 0.9) return pastedOffice(ctx);
  if (x < 0.94) return `<blockquote>${inline(ctx)}</blockquote>`;
  return `<div>${inline(ctx)}<br></div>`;
}

function richText(ctx: HtmlContext, blocks: number, images: AdoAttachment[]): string {
  const out: string[] = [];
  for (let i = 0; i < blocks; i++) out.push(block(ctx));
  for (const img of images) out.splice(ctx.rnd.int(0, out.length), 0, image(ctx, img));
  return out.join('');
}

export interface HtmlFields {
  description: string | null;
  acceptanceCriteria: string | null;
  reproSteps: string | null;
  systemInfo: string | null;
}

/** Ids whose description is far over Jira's 32,767-character field limit. */
export function isHugeDescription(world: AdoWorld, id: number): boolean {
  const n = world.workItems.length;
  return (n >= 100 && id === Math.ceil(n * 0.7)) || mix(world.seed, id, 0x4a9e) % 500 === 0;
}

export function htmlFields(world: AdoWorld, item: AdoWorkItem, baseUrl: string): HtmlFields {
  const rnd = rngFor(world.seed, item.id, Purpose.html);
  const ctx: HtmlContext = { world, baseUrl, rnd, itemId: item.id };
  const isBug = item.type === 'Bug';
  const testy = item.type === 'Test Case' || item.type === 'Shared Steps';
  const descImages = isBug ? [] : item.inlineImages;
  const huge = isHugeDescription(world, item.id);
  const hasDescription = huge || descImages.length > 0 || rnd.chance(testy ? 0.3 : isBug ? 0.4 : 0.85);
  const description = hasDescription
    ? richText(ctx, huge ? 400 : rnd.chance(0.1) ? rnd.int(8, 20) : rnd.int(1, 6), descImages)
    : null;
  let acceptanceCriteria: string | null = null;
  if (item.type === 'User Story' && rnd.chance(0.6)) {
    const criteria = Array.from(
      { length: rnd.int(2, 5) },
      () =>
        `<li><b>Given</b> ${escapeHtml(rnd.pick(COMPONENTS))} is open, <b>when</b> the user saves, <b>then</b> ${inline(ctx)}</li>`,
    );
    acceptanceCriteria = `<div>Acceptance criteria:</div><ol>${criteria.join('')}</ol>${rnd.chance(0.3) ? empty(ctx) : ''}`;
  }
  let reproSteps: string | null = null;
  let systemInfo: string | null = null;
  if (isBug) {
    const steps = Array.from(
      { length: rnd.int(2, 6) },
      (_, i) =>
        `<li>${i === 0 ? 'Open' : 'Click'} ${escapeHtml(rnd.pick(COMPONENTS))}${rnd.chance(0.2) ? ` ${mention(ctx)}` : ''}</li>`,
    );
    reproSteps =
      `<ol>${steps.join('')}</ol>` +
      `<div><b>Expected:</b> ${inline(ctx)}</div><div><b>Actual:</b> ${inline(ctx)}</div>` +
      (rnd.chance(0.2) ? pastedOffice(ctx) : '') +
      item.inlineImages.map((img) => image(ctx, img)).join('');
    if (rnd.chance(0.6)) {
      systemInfo = rnd.chance(0.5)
        ? `<div>Browser: ${rnd.pick(['Edge 124.0', 'Chrome 125.0.6422.60', 'Safari 17.4', 'Firefox 126'])}<br>OS: ${rnd.pick(['Windows 11 23H2', 'macOS 14.4', 'Ubuntu 22.04', 'iOS 17.5'])}<br>Build: 2024.${rnd.int(1, 12)}.${rnd.int(100, 9999)}</div>`
        : `<table><tbody><tr><td>Version</td><td>${rnd.int(1, 9)}.${rnd.int(0, 20)}.${rnd.int(0, 99)}</td></tr><tr><td>Region</td><td>West Europe</td></tr></tbody></table>`;
    }
  }
  return { description, acceptanceCriteria, reproSteps, systemInfo };
}

/** One comment's HTML. */
export function commentHtml(world: AdoWorld, itemId: number, k: number, baseUrl: string): string {
  const rnd = rngFor(world.seed, itemId, Purpose.comments, k);
  const ctx: HtmlContext = { world, baseUrl, rnd, itemId };
  const x = rnd.next();
  if (x < 0.3) return `<div>${mention(ctx)} ${inline(ctx)}</div>`;
  if (x < 0.4) return `<div>${inline(ctx)}</div>${list(ctx, 2)}`;
  if (x < 0.45) return `<div>Tried this:</div>${code(ctx)}`;
  if (x < 0.55)
    return `<p>${escapeHtml(rnd.pick(['LGTM', 'Done.', 'Any update?', 'Moving to next sprint']))} ${rnd.pick(EMOJI)}</p>`;
  if (x < 0.6) return `<div>Blocked by ${workItemRef(ctx)}</div>`;
  if (x < 0.63) return pastedOffice(ctx);
  return paragraph(ctx);
}
