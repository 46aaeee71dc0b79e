/** The CLI's failures and their exit codes, so scripts can tell "you typed it wrong" from "the API said no". */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  api: 3,
  auth: 4,
} as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    /** Lines printed one per line instead of `message` (the API's message array). */
    readonly lines: string[] = [message],
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.usage);

/** The API's error body: `message` is a string or, for validation, an array of sentences. */
export interface ApiErrorBody {
  statusCode?: number;
  message?: string | string[];
  error?: string;
  code?: string;
}

export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody | undefined,
  ) {
    const raw = body?.message;
    const lines = Array.isArray(raw) ? raw.map(String) : [raw ? String(raw) : `HTTP ${status}`];
    const code = body?.code ? `${body.code} ` : '';
    // 401 is about who you are (log in again); everything else is the API refusing the request.
    super(`${code}(${status}): ${lines.join('; ')}`, status === 401 ? EXIT.auth : EXIT.api, lines);
  }
  get code(): string | undefined {
    return this.body?.code;
  }
}
