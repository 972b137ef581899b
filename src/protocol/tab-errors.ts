// What the shared engine worker and a tab agree on besides EngineApi: the name of the error a tab's
// calls reject with once the worker dropped it for silence. Data only; no comlink, no worker code.

/**
 * The `name` of the error every call of a tab the shared worker ended (silent past its heartbeat
 * timeout) rejects with: comlink carries name and message, and src/lib types it as TabExpiredError.
 */
export const TAB_EXPIRED_ERROR_NAME = 'TabExpiredError';
