/**
 * The DOM walk: block elements end the current paragraph, inline elements add marks to the text below them,
 * unknown elements are unwrapped. Blocks met in an inline context (an image or a list inside a span or a
 * heading) close the paragraph or heading around them, which continues after them. The result is "loose" ADF:
 * fit.ts then makes the nesting legal.
 */
import type { BlockConverter, InheritedState } from './block-converter.ts';
import { cleanText } from './chars.ts';
import { convertCodeBlock } from './code-block.ts';
import { attr, type ChildNode, Element, Text, textContent } from './dom.ts';
import { BLOCKS, DROPPED, EMBEDS, METADATA, NO_TEXT } from './elements.ts';
import type { Env } from './env.ts';
import { MAX_HTML_DEPTH } from './html-limits.ts';
import { convertImage } from './images.ts';
import { COLLAPSIBLE, finishInline, isBlank } from './inline-run.ts';
import { isHidden, marksFor } from './inline-state.ts';
import { convertList, orphanItem } from './lists.ts';
import { hasMark, legalTextMarks, withMark } from './marks.ts';
import { convertMention } from './mentions.ts';
import { hardBreak, heading, link, paragraph, rule, text } from './nodes.ts';
import {
  issueHref,
  issueKeyFor,
  pendingReference,
  referenceNode,
  safeHref,
  textWithReferences,
  workItemIdFromUrl,
} from './references.ts';
import { convertTable } from './tables.ts';
import type { AdfNode } from './types.ts';
import {
  buildWordLists,
  listMarker,
  type WordListEntry,
  wordIndent,
  wordListPosition,
  wordListRunEnd,
} from './word-lists.ts';

const HEADING = /^h([1-6])$/;
/**
 * Elements nested deeper than this are taken as plain text: documents too deep for Jira are never built, nor is
 * the stack overflowed here. HTML nested deeper is not even parsed (html-to-adf.ts), so this only catches the
 * odd level the converter adds (a Word list's run).
 */
export const MAX_DEPTH = MAX_HTML_DEPTH;

type Textblock = { type: 'paragraph' } | { type: 'heading'; level: number };

/** Collects one container's blocks; consecutive inline nodes become one paragraph (or heading). */
class Sink {
  readonly blocks: AdfNode[] = [];
  textblock: Textblock = { type: 'paragraph' };
  private run: AdfNode[] = [];

  inline(node: AdfNode): void {
    this.run.push(node);
  }

  block(node: AdfNode): void {
    this.flush();
    this.blocks.push(node);
  }

  /** Ends the current line. Paragraphs that show nothing (`<p>&nbsp;</p>`, `<div><br></div>`) are dropped. */
  flush(): void {
    if (this.run.length === 0) return;
    const content = finishInline(this.run);
    this.run = [];
    if (isBlank(content)) return;
    const tb = this.textblock;
    this.blocks.push(tb.type === 'heading' ? heading(tb.level, content) : paragraph(content));
  }
}

export class Converter implements BlockConverter {
  private depth = 0;
  /** Nodes already accounted for elsewhere (a Word list item's bullet or number). */
  private readonly skipped = new Set<ChildNode>();

  constructor(private readonly env: Env) {}

  blocks(nodes: ChildNode[], state: InheritedState): AdfNode[] {
    const sink = new Sink();
    this.children(nodes, state, sink);
    sink.flush();
    return sink.blocks;
  }

  private children(nodes: ChildNode[], state: InheritedState, sink: Sink): void {
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      if (this.depth < MAX_DEPTH && wordListPosition(node)) {
        const end = wordListRunEnd(nodes, i);
        for (const list of this.wordLists(nodes.slice(i, end), state)) sink.block(list);
        i = end - 1;
      } else this.node(node, state, sink);
    }
  }

  private node(node: ChildNode, state: InheritedState, sink: Sink): void {
    if (this.skipped.has(node)) return;
    if (node instanceof Text) this.text(node.data, state, sink);
    // Comments (Word's conditional ones included), doctypes and processing instructions show nothing.
    else if (!(node instanceof Element)) return;
    else if (this.depth >= MAX_DEPTH) this.flattened(node, state, sink);
    else {
      this.depth++;
      try {
        this.element(node, state, sink);
      } finally {
        this.depth--;
      }
    }
  }

  /** A run of Word list paragraphs (see word-lists.ts); comments and white space between them show nothing. */
  private wordLists(run: ChildNode[], state: InheritedState): AdfNode[] {
    const entries: WordListEntry[] = [];
    this.depth++;
    try {
      for (const node of run) {
        if (!(node instanceof Element) || isHidden(node)) continue;
        const inner: InheritedState = { marks: marksFor(node, state.marks) };
        const position = wordListPosition(node);
        const indent = wordIndent(node);
        if (!position) {
          entries.push({ kind: 'continuation', indent, content: this.blocks(node.children, inner) });
          continue;
        }
        const marker = listMarker(node);
        for (const n of marker.nodes) this.skipped.add(n);
        const content = this.blocks(node.children, inner);
        entries.push({ kind: 'item', position, marker: marker.text, indent, content });
      }
    } finally {
      this.depth--;
    }
    return buildWordLists(entries);
  }

  private flattened(el: Element, state: InheritedState, sink: Sink): void {
    const value = cleanText(textContent(el, NO_TEXT));
    this.env.warn('flattened-element', `<${el.name}> nested over ${MAX_DEPTH} deep: kept as plain text`);
    if (value) sink.inline(text(value, legalTextMarks(state.marks)));
  }

  private element(el: Element, state: InheritedState, sink: Sink): void {
    const name = el.name;
    if (METADATA.has(name) || isHidden(el)) return;
    if (DROPPED.has(name)) {
      if (EMBEDS.has(name) || textContent(el).trim())
        this.env.warn('dropped-element', `<${name}> and its content were dropped`);
      return;
    }
    const inner: InheritedState = { marks: marksFor(el, state.marks) };
    const level = HEADING.exec(name)?.[1];
    if (level) this.heading(el, Number(level), inner, sink);
    else if (name === 'br') sink.inline(hardBreak());
    else if (name === 'hr') sink.block(rule());
    else if (name === 'img') this.image(el, inner, sink);
    else if (name === 'a') this.anchor(el, inner, sink);
    else if (name === 'pre') sink.block(convertCodeBlock(el));
    else if (name === 'ul' || name === 'ol') {
      const list = convertList(el, inner, this);
      if (list) sink.block(list);
    } else if (name === 'li') sink.block(orphanItem(el, inner, this));
    else if (name === 'table') for (const block of convertTable(el, inner, this)) sink.block(block);
    else if (name === 'blockquote') {
      const content = this.blocks(el.children, inner);
      if (content.length > 0) sink.block({ type: 'blockquote', content });
    } else if (BLOCKS.has(name)) {
      sink.flush();
      this.children(el.children, inner, sink);
      sink.flush();
    }
    // Inline formatting, spans, fonts, Word's <o:p> and anything unknown: the content, with its marks.
    else this.children(el.children, inner, sink);
  }

  private text(data: string, state: InheritedState, sink: Sink): void {
    const value = cleanText(data);
    if (!value) return;
    const marks = legalTextMarks(state.marks);
    // Code and link text is taken literally: a `#12` there is not a reference to rewrite.
    const literal = hasMark(marks, 'code') || hasMark(marks, 'link');
    const nodes = literal ? [text(value, marks)] : textWithReferences(value, marks, this.env);
    for (const node of nodes) sink.inline(node);
  }

  private heading(el: Element, level: number, state: InheritedState, sink: Sink): void {
    sink.flush();
    const outer = sink.textblock;
    sink.textblock = { type: 'heading', level };
    this.children(el.children, state, sink);
    sink.flush();
    sink.textblock = outer;
  }

  private image(el: Element, state: InheritedState, sink: Sink): void {
    const block = convertImage(el, state.marks, this.env);
    if (block) sink.block(block);
  }

  private anchor(el: Element, state: InheritedState, sink: Sink): void {
    const href = attr(el, 'href')?.trim();
    const vss = attr(el, 'data-vss-mention');
    const label = textContent(el).replace(COLLAPSIBLE, ' ').trim();
    if (vss !== undefined && label.startsWith('@') && label.length > 1) {
      sink.inline(convertMention(vss, label, legalTextMarks(state.marks), this.env));
      return;
    }
    const labelId = /^#(\d{1,9})$/.exec(label)?.[1];
    const urlId = workItemIdFromUrl(href);
    let marks = state.marks;
    if (
      (vss !== undefined && labelId) ||
      (urlId !== undefined && (labelId === String(urlId) || label === href))
    ) {
      // A work item reference as ADO's editor writes it: `#123` linking to the item.
      const id = Number(labelId ?? urlId);
      const key = issueKeyFor(id, this.env);
      const node = key
        ? referenceNode(key, legalTextMarks(marks), this.env)
        : pendingReference(id, legalTextMarks(marks), this.env);
      if (node) {
        sink.inline(node);
        return;
      }
    } else if (urlId !== undefined) {
      // A link to a work item under other words: keep the words, point them at the migrated issue.
      const key = issueKeyFor(urlId, this.env);
      const href = key ? issueHref(key, this.env) : safeHref(this.env.ctx.referenceHref?.(urlId));
      if (href) marks = withMark(marks, link(href));
    }
    const safe = safeHref(href);
    if (marks === state.marks && safe) marks = withMark(marks, link(safe));
    this.children(el.children, { marks }, sink);
  }
}
