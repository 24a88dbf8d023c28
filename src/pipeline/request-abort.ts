/**
 * A request's abort, cheap until somebody asks for an AbortSignal: most requests are never
 * aborted, and an AbortController with its EventTarget listeners costs several microseconds
 * per request. Listeners added with onAbort are plain functions in an array; `signal` makes
 * the real AbortSignal on first use (already aborted if the request was). It is also a
 * signal undici accepts (AbortLike): an upstream call needs no AbortController at all.
 */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export class RequestAbort implements AbortLike {
  aborted = false;
  reason: unknown = undefined;
  private controller: AbortController | null = null;
  private listeners: Array<(reason: unknown) => void> | null = null;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Abort once; without a reason, an AbortError as AbortController gives. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    this.controller?.abort(this.reason);
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners) for (const l of listeners) l(this.reason);
  }

  /** The part of EventTarget undici uses on a request's `signal`: so this object can be that signal. */
  addEventListener(type: 'abort', listener: (reason: unknown) => void): void {
    if (type === 'abort' && !this.aborted) (this.listeners ??= []).push(listener);
  }

  removeEventListener(type: 'abort', listener: (reason: unknown) => void): void {
    const i = type === 'abort' ? (this.listeners?.indexOf(listener) ?? -1) : -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }

  /** Call `listener` once when aborted (at once if already); the returned function removes it. */
  onAbort(listener: (reason: unknown) => void): () => void {
    if (this.aborted) {
      listener(this.reason);
      return noop;
    }
    this.addEventListener('abort', listener);
    return () => this.removeEventListener('abort', listener);
  }
}

function noop(): void {}
