// The refresh token as every tab of the origin sees it at once. Local storage holds it (SPEC: the
// refresh token lives in browser local storage), but Chromium hands one tab's write to the others
// later, so a tab taking its turn to refresh could read a token another tab had just rotated, and
// presenting a rotated token revokes the whole session (CONTRACT §8). IndexedDB transactions go
// through one store in the browser, in order: a read after another tab's committed write sees it.

import type { SharedToken } from "./client.js";

const DATABASE = "jobhouse";
const STORE = "session";
const KEY = "refresh_token";

/** The shared token in IndexedDB, or undefined where there is none (the client then uses local storage alone). */
export function indexedDbToken(): SharedToken | undefined {
  if (typeof indexedDB === "undefined") return undefined;
  let opened: Promise<IDBDatabase> | null = null;
  const database = () =>
    (opened ??= new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open(DATABASE, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(STORE);
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    }));
  /** Runs one request in its own transaction and answers when the transaction has committed. */
  const transact = async <T,>(mode: IDBTransactionMode, act: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> => {
    const db = await database();
    return new Promise<T>((resolve, reject) => {
      const transaction = db.transaction(STORE, mode);
      const request = act(transaction.objectStore(STORE));
      transaction.oncomplete = () => resolve(request.result);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error);
    });
  };
  return {
    read: async () => (await transact("readonly", (store) => store.get(KEY))) as string | null | undefined,
    write: async (token) => void (await transact("readwrite", (store) => store.put(token, KEY))),
  };
}
