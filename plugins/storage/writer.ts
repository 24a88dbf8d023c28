/**
 * @module
 * How a completion becomes a stored response: its object (from the parts assemble.ts reads, without content for a
 * no_content model), its row (the caller's account, the expiry) and the write, into the request's one transaction
 * when credit settles it. A failed write never breaks the answer: it is counted and logged.
 */
import type { Logger } from 'pino';
import {
  deferWrite,
  STORED_VIEW,
  type Counter,
  type GatewayContext,
  type StoredView,
  type SweepGate,
  type Usage,
} from '../../src/plugin';
import { toResponse, type ChoiceParts } from './assemble';
import { ANONYMOUS, REQUEST_MESSAGES } from './routes';
import { boundedMessages } from './bounded';
import { putStatement, type ResponseRepo } from './store/repo';

export interface WriterDeps {
  responses: ResponseRepo;
  /** The retention sweep's gate: lowered to each new expiry. */
  gate: SweepGate;
  writeErrors: Counter;
  logger: Logger;
  /** 0 keeps responses until deleted. */
  ttlSeconds: number;
  /** Models whose responses are stored without content. */
  noContent: ReadonlySet<string>;
}

/** Made once at setup; the middleware calls it for each stored completion. */
export class ResponseWriter {
  private readonly responses: ResponseRepo;
  private readonly gate: SweepGate;
  private readonly writeErrors: Counter;
  private readonly logger: Logger;
  private readonly ttlSeconds: number;
  private readonly noContent: ReadonlySet<string>;

  constructor(deps: WriterDeps) {
    this.responses = deps.responses;
    this.gate = deps.gate;
    this.writeErrors = deps.writeErrors;
    this.logger = deps.logger;
    this.ttlSeconds = deps.ttlSeconds;
    this.noContent = deps.noContent;
  }

  async save(
    ctx: GatewayContext,
    parts: ChoiceParts[],
    status: 'completed' | 'incomplete',
    usage: Usage | null,
  ): Promise<void> {
    await this.put(ctx, this.responseOf(ctx, parts, status, usage), status);
  }

  responseOf(
    ctx: GatewayContext,
    parts: ChoiceParts[],
    status: 'completed' | 'incomplete',
    usage: Usage | null,
  ): Record<string, unknown> {
    const s = ctx.state.gateway;
    const id = s.completionId;
    const withContent = !this.noContent.has(s.model.id);
    const body = toResponse(parts, { id, model: s.model.id, createdAt: Date.now(), status, usage, withContent });
    // The messages as the upstream got them (a guard's redactions are made in place before the call), for the
    // console's record view; GET never shows them (publicBody). Inline images and audio as their size (bounded.ts).
    if (withContent) body[REQUEST_MESSAGES] = boundedMessages(s.request.messages);
    return body;
  }

  recordOf(ctx: GatewayContext, sent: Record<string, unknown>, status: string) {
    const s = ctx.state.gateway;
    const now = Date.now();
    // A guard that restored redacted values for the client keeps them out of the store (STORED_VIEW).
    const view = s.extensions[STORED_VIEW] as StoredView | undefined;
    const body = view ? view(sent) : sent;
    return {
      // The object's own id: a Responses request with remote MCP tools answers in a later round, whose completion id
      // is `<id>_r<n>`, while the client reads the response by the id it was given.
      id: typeof body.id === 'string' ? body.id : s.completionId,
      accountId: s.principal?.accountId ?? ANONYMOUS,
      model: s.model.id,
      status,
      body,
      createdAt: now,
      expiresAt: this.ttlSeconds === 0 ? null : now + this.ttlSeconds * 1000,
    };
  }

  async put(ctx: GatewayContext, body: Record<string, unknown>, status: string): Promise<void> {
    try {
      const r = this.recordOf(ctx, body, status);
      if (r.expiresAt !== null) this.gate.lower(r.expiresAt);
      // Into the request's one transaction when credit settles it; else committed here.
      if (!deferWrite(ctx.state.gateway.extensions, putStatement(r))) await this.responses.put(r);
    } catch (e) {
      this.writeErrors.inc();
      this.logger.error({ err: e, requestId: ctx.state.gateway.requestId }, 'storing the response failed');
    }
  }
}
