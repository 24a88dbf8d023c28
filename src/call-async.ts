/**
 * Call `fn`, which answers with a promise, so that a synchronous throw (a plugin's function that throws instead of
 * rejecting, or a check made before the first await) becomes that promise's rejection: the caller handles one way of
 * failing. Not an async function: `fn`'s own promise is returned, with no frame or turn of its own.
 */
export function callAsync<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return fn();
  } catch (e) {
    return Promise.reject(e);
  }
}
