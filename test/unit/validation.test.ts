import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HttpError } from '../../functions/platform/errors.ts';
import { parseOrThrow } from '../../functions/platform/validation.ts';

const Schema = z.strictObject({
  email: z.email(),
  name: z.string().min(1).max(5),
  count: z.number().int().min(2),
  kind: z.enum(['a', 'b']),
  nested: z.strictObject({ id: z.uuid() }).optional(),
});

function messages(value: unknown): string[] {
  try {
    parseOrThrow(Schema, value);
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    const body = (err as HttpError).toBody();
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'VALIDATION_FAILED' });
    return body.message as string[];
  }
  throw new Error('expected a validation error');
}

describe('validation messages', () => {
  it('says which fields are missing, whatever their type', () => {
    expect(messages({})).toEqual([
      'email is required',
      'name is required',
      'count is required',
      'kind is required',
    ]);
  });

  it('names each broken field in a plain sentence', () => {
    expect(
      messages({ email: 'x', name: '', count: 1, kind: 'c', nested: { id: 'q' }, extra: 1, more: 2 }),
    ).toEqual([
      'email must be a valid e-mail address',
      'name must not be empty',
      'count must be at least 2',
      'kind must be one of: a, b',
      'nested.id must be a UUID',
      'extra is not a known field',
      'more is not a known field',
    ]);
    expect(messages({ email: 'a@b.co', name: 'toolong', count: 'x', kind: 'a' })).toEqual([
      'name must be at most 5 characters',
      'count must be a number',
    ]);
  });

  it('refuses a body that is not an object', () => {
    expect(messages(null)).toEqual(['body must be a JSON object']);
    expect(messages([1])).toEqual(['body must be a JSON object']);
  });

  it('returns the parsed value when valid', () => {
    expect(parseOrThrow(Schema, { email: 'a@b.co', name: 'n', count: 3, kind: 'b' })).toEqual({
      email: 'a@b.co',
      name: 'n',
      count: 3,
      kind: 'b',
    });
  });
});
