/**
 * The server's settings contract, as the extension needs it: the limits and defaults defined once in
 * the Python core (fisk_ls/knowledge/settings_schema.py), exported as
 * fisk_ls/knowledge/settings.schema.json and generated from it into schema.generated.ts
 * (scripts/editor_contracts.py; a Python test fails when that file is stale). package.json
 * `contributes.configuration` and the tool's input schema repeat them for the settings editor and the
 * model; `scripts/editor_contracts.py --check` (with its Python test) and the unit test contract.test.ts
 * fail when they disagree with the schema file.
 *
 * One behaviour per boundary, as the server does it:
 * - a setting out of range keeps its default, and one message names every bad field
 *   (`problemsMessage`, the server's own wording: `fisk.topK (expected an integer from 1 to 20, got 30)`);
 * - a request argument out of range (the language model tool's `topK`, `query` or `also`) is a clear
 *   error naming the limit.
 */
import { DEFS, SETTINGS } from './schema.generated';

export interface Limit {
  type: 'integer' | 'number' | 'string';
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  default?: number;
}

const EMBEDDINGS = SETTINGS.embeddings.properties;
export const TOP_K = SETTINGS.topK satisfies Limit;
export const EMBEDDINGS_TIMEOUT = EMBEDDINGS.timeout satisfies Limit;
export const EMBEDDINGS_QUERY_TIMEOUT = EMBEDDINGS.queryTimeout satisfies Limit;
export const QUERY = DEFS.query satisfies Limit;
/** The built-in provider's onnxruntime threads (0: all cores but one). */
export const EMBEDDINGS_THREADS = EMBEDDINGS.threads satisfies Limit;
/** `openai`: an OpenAI-compatible server at baseUrl; `builtin`: a model run inside fisk-ls. */
export const EMBEDDINGS_PROVIDERS = EMBEDDINGS.provider.enum;
export type EmbeddingsProvider = (typeof EMBEDDINGS_PROVIDERS)[number];

/** A JSON Schema `if`/`then`/`else` over an object's fields, in the subset the schema file uses. */
export interface Rule {
  if: { properties: Readonly<Record<string, { const: unknown }>>; required?: readonly string[] };
  then: { properties?: Readonly<Record<string, { const: unknown }>> };
  else: { required: readonly string[] };
}
/**
 * The embeddings' provider rule, written once in the server's contract (settings.schema.json's
 * if/then/else): provider builtin takes no baseUrl, otherwise baseUrl and model are required.
 */
export const EMBEDDINGS_RULE: Rule = SETTINGS.embeddings;
/** Question expansion: `none`, `openai` (a chat server the server calls) or `editor` (the editor's model, through `fisk/expand`). */
export const EXPANSION_PROVIDERS = SETTINGS.expansion.properties.provider.enum;
export type ExpansionProvider = (typeof EXPANSION_PROVIDERS)[number];
/** Seconds the expansion's model may take before the search keeps its plain results. */
export const EXPANSION_TIMEOUT = SETTINGS.expansion.properties.timeout satisfies Limit;
export const QUERY_MAX_LENGTH: number = QUERY.maxLength;
/** A search's extra strings (`also`): at most `maxItems`, each a string of at most `items.maxLength` characters. */
export const ALSO = DEFS.also;

/** The allowed values in words, as the server says them ("an integer from 1 to 20"). */
export function describeLimit(limit: Limit): string {
  const noun = limit.type === 'integer' ? 'an integer' : limit.type === 'number' ? 'a number' : 'a string';
  if (limit.minimum !== undefined && limit.maximum !== undefined) {
    return `${noun} from ${limit.minimum} to ${limit.maximum}`;
  }
  if (limit.minimum !== undefined) {
    return `${noun} of at least ${limit.minimum}`;
  }
  if (limit.maxLength !== undefined) {
    return `a string of at most ${limit.maxLength.toLocaleString('en-US')} characters`;
  }
  return noun;
}

/** undefined when `value` fits, else "expected …, got …" (the server's `check_value`). */
export function checkValue(limit: Limit, value: unknown): string | undefined {
  let ok: boolean;
  if (limit.type === 'string') {
    ok = typeof value === 'string' && (limit.maxLength === undefined || value.length <= limit.maxLength);
  } else {
    ok =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      (limit.type === 'number' || Number.isInteger(value)) &&
      (limit.minimum === undefined || value >= limit.minimum) &&
      (limit.maximum === undefined || value <= limit.maximum);
  }
  if (ok) {
    return undefined;
  }
  const shown =
    typeof value === 'string' && value.length > 80 ? `${value.length.toLocaleString('en-US')} characters` : String(JSON.stringify(value));
  return `expected ${describeLimit(limit)}, got ${shown.slice(0, 100)}`;
}

/** The rule's condition in words: "provider builtin". */
export function ruleCondition(rule: Rule): string {
  return Object.entries(rule.if.properties)
    .map(([key, p]) => `${key} ${String(p.const)}`)
    .join(' and ');
}

/**
 * What `value` (an object's given fields) breaks of `rule`, as [field, problem] pairs (field undefined:
 * the whole object), in the server's words (`rule_problems` in settings_schema.py): under the
 * condition, a `then` field other than its const `""` is "not used with provider builtin"; otherwise a
 * missing or empty `else.required` field makes "baseUrl and model are required, or provider builtin".
 */
export function ruleProblems(rule: Rule, value: Readonly<Record<string, unknown>>): [string | undefined, string][] {
  const condition = Object.entries(rule.if.properties);
  const applies =
    (rule.if.required ?? []).every((key) => value[key] !== undefined) &&
    condition.every(([key, p]) => value[key] === undefined || value[key] === p.const);
  if (applies) {
    return Object.entries(rule.then.properties ?? {})
      .filter(([key, p]) => value[key] !== undefined && value[key] !== p.const)
      .map(([key]) => [key, `not used with ${ruleCondition(rule)}`]);
  }
  const required = rule.else.required;
  return required.some((key) => value[key] === undefined || value[key] === '')
    ? [[undefined, `${required.join(' and ')} are required, or ${ruleCondition(rule)}`]]
    : [];
}

export function isTopK(value: unknown): value is number {
  return checkValue(TOP_K, value) === undefined;
}

/** The request-boundary check: undefined passes (the configured default applies), anything else must fit. */
export function checkTopK(value: unknown, where: string): number | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  const problem = checkValue(TOP_K, value);
  if (problem !== undefined) {
    throw new RangeError(`${where}: topK: ${problem}`);
  }
  return value as number;
}

/**
 * The request-boundary check of `also`: undefined or an empty list is no extra strings; otherwise a
 * list of at most ALSO.maxItems strings, each fitting QUERY. Blank strings are dropped (they find nothing).
 */
export function checkAlso(value: unknown, where: string): string[] | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  if (!Array.isArray(value)) {
    throw new RangeError(`${where}: also: expected a list of at most ${ALSO.maxItems} strings, got ${String(JSON.stringify(value)).slice(0, 100)}`);
  }
  if (value.length > ALSO.maxItems) {
    throw new RangeError(`${where}: also: expected at most ${ALSO.maxItems} strings, got ${value.length}`);
  }
  const out: string[] = [];
  value.forEach((item: unknown, i) => {
    const problem = checkValue(ALSO.items, item);
    if (problem !== undefined) {
      throw new RangeError(`${where}: also[${i}]: ${problem}${typeof item === 'string' ? '; shorten it' : ''}`);
    }
    const text = (item as string).trim();
    if (text !== '') {
      out.push(text);
    }
  });
  return out.length > 0 ? out : undefined;
}

/** One message naming every bad setting (the server's `bad_options_message`). */
export function problemsMessage(problems: readonly string[]): string {
  return `fisk: ignoring invalid settings, using defaults for: ${problems.join('; ')}`;
}
