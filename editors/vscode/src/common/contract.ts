/**
 * The server's settings contract, as the extension needs it: the limits and defaults defined once in
 * the Python core and exported as fisk_ls/knowledge/settings.schema.json. package.json
 * `contributes.configuration` repeats them for the settings editor; the unit test contract.test.ts
 * fails when this file, package.json or the tool's input schema disagree with the schema file.
 *
 * One behaviour per boundary, as the server does it:
 * - a setting out of range keeps its default, and one message names every bad field
 *   (`problemsMessage`, the server's own wording);
 * - a request argument out of range (the language model tool's `topK`, the API's `search`) is a
 *   clear error naming the limit.
 */

export const TOP_K = { minimum: 1, maximum: 20, default: 5 } as const;
export const QUERY_MAX_LENGTH = 2000;

/** `fisk.topK (expected an integer from 1 to 20)`: a bad setting, named as the server names it. */
export function topKProblem(key: string): string {
  return `${key} (expected an integer from ${TOP_K.minimum} to ${TOP_K.maximum})`;
}

export function isTopK(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= TOP_K.minimum && value <= TOP_K.maximum;
}

/** The request-boundary check: undefined passes (the server's default applies), anything else must be in range. */
export function checkTopK(value: unknown, where: string): number | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  if (!isTopK(value)) {
    throw new RangeError(`${where}: topK must be an integer from ${TOP_K.minimum} to ${TOP_K.maximum}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** One message naming every bad setting (the server's `bad_options_message`). */
export function problemsMessage(problems: readonly string[]): string {
  return `fisk: ignoring invalid settings, using defaults for: ${problems.join('; ')}`;
}
