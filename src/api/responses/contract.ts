/**
 * How /v1/responses and the storage plugin meet. On a responses request the storage
 * plugin, when it will keep the response (`store` not false, model not excluded), puts a
 * ResponseSaver into `state.extensions[RESPONSE_SAVER]`; the endpoint calls it once with
 * the final response object (after credit has priced it), so the stored object is the
 * one the client got. The stored body also keeps the conversation's input items under
 * INPUT_ITEMS (for previous_response_id and GET .../input_items); GET never shows them.
 */
export const RESPONSE_SAVER = 'storage.saveResponse';
export type ResponseSaver = (body: Record<string, unknown>, status: string) => Promise<void>;
export const INPUT_ITEMS = 'input_items';

/** A response the storage plugin keeps. */
export interface StoredResponse {
  id: string;
  accountId: string;
  model: string;
  status: string;
  /** The response object as served by GET /responses/{id}. */
  body: Record<string, unknown>;
  createdAt: number;
  expiresAt: number | null;
}

/**
 * The storage plugin's stored responses, as others read them (`services.shared` STORED_RESPONSES): the core's
 * /v1/responses continues a previous_response_id, the console shows a record's response. Without the storage plugin
 * nothing is stored, and none is found.
 */
export interface StoredResponses {
  /** undefined when there is none (or it expired). */
  get(id: string): Promise<StoredResponse | undefined>;
}
export const STORED_RESPONSES = 'storage.responses';

/**
 * A plugin that changed what the client sees from what the upstream said (a guard that restored redacted values) puts
 * a StoredView into `state.extensions[STORED_VIEW]`: the storage plugin passes each response object it keeps through
 * it, so the store holds the upstream's form (placeholders) while the client got the restored one.
 */
export const STORED_VIEW = 'storage.storedView';
export type StoredView = (body: Record<string, unknown>) => Record<string, unknown>;
