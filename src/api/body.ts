import type Koa from 'koa';
import { errors } from '../errors';
import type { ErrorObject } from 'ajv';
import type { Validator } from '../validation/validator';
import { readJson } from './read-json';
import { combine } from './chat-request';

/**
 * A reader of bodies that `validate` checks (a validator generated at build time: src/validation/generated/bodies.ts,
 * a plugin's generated/bodies.ts):
 * it parses (64 KB limit) and validates, with every problem in one 400.
 */
export function bodyReader<T>(validate: Validator): (ctx: Koa.Context) => Promise<T> {
  const check = bodyChecker<T>(validate);
  return async (ctx) => check(await readJson(ctx.req, 64 * 1024, '64kb'));
}

/** A JSON body (64 KB at most) not yet checked: for a plugin's section, whose `write` checks it (bodyChecker). */
export function readJsonBody(ctx: Koa.Context): Promise<unknown> {
  return readJson(ctx.req, 64 * 1024, '64kb');
}

/**
 * The check of bodyReader for a value already parsed (a body the console's settings route read for a plugin's
 * section): the value as `T`, or one 400 with every problem, each naming its field.
 */
export function bodyChecker<T>(validate: Validator): (body: unknown) => T {
  return (body) => {
    if (!validate(body)) {
      throw combine(
        explaining(validate.errors ?? []).map((e) => {
          const field =
            e.keyword === 'required'
              ? (e.params as { missingProperty: string }).missingProperty
              : e.keyword === 'additionalProperties'
                ? (e.params as { additionalProperty: string }).additionalProperty
                : e.instancePath.slice(1).replace(/\//g, '.');
          const message = e.keyword === 'additionalProperties' ? 'is not a known field' : (e.message ?? 'is invalid');
          return errors.invalidRequest(`${field || 'body'} ${message}`, field || null, 'invalid_field');
        }),
      );
    }
    return body as T;
  };
}

/** ?limit & ?offset, bounded. */
export function paging(ctx: Koa.Context): { limit: number; offset: number } {
  const limit = Math.min(Math.max(Number.parseInt(String(ctx.query.limit ?? '100'), 10) || 100, 1), 1000);
  const offset = Math.max(Number.parseInt(String(ctx.query.offset ?? '0'), 10) || 0, 0);
  return { limit, offset };
}

/**
 * The errors that say what is wrong: of a field that may be a value or null (`anyOf: [{...}, {type: null}]`), ajv
 * reports each alternative's failure and the anyOf itself; "must be null" and "must match a schema in anyOf" say
 * nothing when the value's own alternative said what is wrong with it.
 */
function explaining(all: ErrorObject[]): ErrorObject[] {
  const noise = (e: ErrorObject) =>
    e.keyword === 'anyOf' || (e.keyword === 'type' && (e.params as { type?: string }).type === 'null');
  const real = all.filter((e) => !noise(e));
  return real.length > 0 ? real : all;
}
