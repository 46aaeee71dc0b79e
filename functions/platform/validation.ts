/**
 * zod at the edge: a failed parse becomes a 400 whose `message` is an array of plain sentences, one per
 * problem, each naming the field ("password must be at least 8 characters").
 */
import type { z } from 'zod';
import { errors } from './errors.ts';

type Issue = z.core.$ZodIssue;

function fieldName(path: PropertyKey[], root: string): string {
  return path.length === 0 ? root : path.map(String).join('.');
}

export function describeIssue(issue: Issue, root = 'body'): string {
  const field = fieldName(issue.path, root);
  // Parsed with reportInput, so an absent value is recognisable whatever the field's type.
  if ('input' in issue && issue.input === undefined && issue.code !== 'unrecognized_keys')
    return `${field} is required`;
  switch (issue.code) {
    case 'invalid_type':
      return `${field} must be ${issue.expected === 'object' ? 'a JSON object' : `a ${issue.expected}`}`;
    case 'too_small':
      if (issue.origin === 'string') {
        return Number(issue.minimum) <= 1
          ? `${field} must not be empty`
          : `${field} must be at least ${issue.minimum} characters`;
      }
      return `${field} must be at least ${issue.minimum}`;
    case 'too_big':
      return issue.origin === 'string'
        ? `${field} must be at most ${issue.maximum} characters`
        : `${field} must be at most ${issue.maximum}`;
    case 'invalid_format':
      if (issue.format === 'email') return `${field} must be a valid e-mail address`;
      if (issue.format === 'uuid') return `${field} must be a UUID`;
      // A pattern means nothing to the caller: the schema's own words say what is wanted.
      if (issue.format === 'regex') return `${field} ${issue.message}`;
      return `${field} must be a valid ${issue.format}`;
    case 'invalid_value':
      return `${field} must be one of: ${issue.values.map(String).join(', ')}`;
    case 'unrecognized_keys':
      return issue.keys.map((k) => `${fieldName([...issue.path, k], root)} is not a known field`).join('; ');
    default:
      return `${field}: ${issue.message}`;
  }
}

/** Parses or throws the API's 400 with every problem listed. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, root = 'body'): z.infer<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const messages = result.error.issues.flatMap((i) => describeIssue(i, root).split('; '));
  throw errors.validation([...new Set(messages)]);
}
