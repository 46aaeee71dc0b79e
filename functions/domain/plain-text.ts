/**
 * Names people give (projects, tenants, mapping and override names) are plain text: no control characters
 * (C0, DEL, C1) and no bidirectional formatting characters, which reorder how a terminal or an editor shows the
 * text around them (Trojan Source, CVE-2021-42574, https://trojansource.codes). Refused at validation (400);
 * the CLI also escapes them when it prints text that came from a tracker (bin/cli/format.ts).
 */
import * as z from 'zod';

/** U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069: the Unicode bidirectional formatting characters. */
const BIDI = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
const CONTROL = '\\u0000-\\u001f\\u007f-\\u009f';
/** Every unsafe character (global, for replacing). */
export const UNSAFE_TEXT = new RegExp(`[${CONTROL}${BIDI}]`, 'g');
const SAFE_NAME = new RegExp(`^[^${CONTROL}${BIDI}]*$`);
/** A multi-line text (a description) may hold line breaks and tabs, nothing else of the kind. */
const SAFE_LINES = new RegExp(`^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f${BIDI}]*$`);

const MESSAGE = 'must not contain control or bidirectional formatting characters';

/** A one-line name of at most `max` characters, trimmed, not empty. */
export const plainName = (max: number) => z.string().trim().min(1).max(max).regex(SAFE_NAME, MESSAGE);

/** A free text of at most `max` characters: line breaks and tabs allowed. */
export const plainLines = (max: number) => z.string().max(max).regex(SAFE_LINES, MESSAGE);
