/**
 * A batch's file as the text an admin uploads: checked against the format's schema first (a file Jira would
 * refuse is never written), then JSON with its keys in the schema's order, two-space indented, ending with a
 * line break. The same file gives the same text, byte for byte.
 */
import { type ImportFile, ImportFileSchema } from './format.ts';

export class InvalidImportFile extends Error {
  override name = 'InvalidImportFile';
  constructor(readonly problems: string[]) {
    super(`not a valid Jira import file: ${problems.slice(0, 5).join('; ')}`);
  }
}

/** The problems the schema finds in a file ([] for a valid one), each with where it is. */
export function importFileProblems(file: unknown): string[] {
  const parsed = ImportFileSchema.safeParse(file);
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`);
}

export function serialiseImportFile(file: ImportFile): string {
  const parsed = ImportFileSchema.safeParse(file);
  if (!parsed.success) throw new InvalidImportFile(importFileProblems(file));
  return `${JSON.stringify(parsed.data, null, 2)}\n`;
}
