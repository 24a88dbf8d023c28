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
