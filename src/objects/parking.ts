// The objects an attempt replaced wait, parked beside the new ones (object-registry.ts makeObject;
// the parked_objects table), for the attempt's end: then they are dropped when it succeeded, or put
// back as they were (same id, table and rows) when it failed. Its worker settles them as the
// attempt ends; the background loop settles those of an attempt that ended without its worker
// doing so (the worker died, or a replace finished after the attempt had timed out).

import type { ColumnStore } from "../data/client.js";
import { sql } from "../data/sql.js";
import { deleteObjectRow, findObjectByTable, insertObject } from "../store/data-objects.js";
import {
  type ParkedRow,
  deleteParked,
  findParkedByTable,
  findParkedObject,
  findParkedOfAttempt,
  findParkedOfEndedAttempts,
  parkedObjectRow,
  replaceParkedObject,
} from "../store/parked-objects.js";
import { type DataScope, forgetColumns, qualified, swapTables, withNameLease } from "./object-registry.js";

/** How long after parking the background loop leaves a parked object to its own worker. */
const SETTLE_GRACE_MS = 30_000;

/**
 * Settles what an attempt parked. Returns the ids of the replacements undone (their objects are
 * gone, and their tables hold the old rows again: no cleanup may drop them).
 */
export async function settleAttempt(ds: DataScope, taskId: bigint, attempt: number, succeeded: boolean): Promise<Set<bigint>> {
  const undone = new Set<bigint>();
  for (const parked of await findParkedOfAttempt(ds.db, taskId, attempt)) {
    if (await settleParked(ds, parked, succeeded)) undone.add(parked.replacement_id);
  }
  return undone;
}

/**
 * Settles the parked objects of attempts that ended without their worker settling them (the
 * background loop); the column store is opened only when there are some.
 */
export async function settleEndedAttempts(scope: Pick<DataScope, "db" | "ids" | "clock">, columns: () => Promise<ColumnStore>): Promise<number> {
  const ended = await findParkedOfEndedAttempts(scope.db, scope.clock.now() - SETTLE_GRACE_MS);
  if (ended.length === 0) return 0;
  const ds: DataScope = { ...scope, columns: await columns(), jobId: null, taskId: null, attempt: null };
  for (const parked of ended) await settleParked(ds, parked, parked.succeeded);
  return ended.length;
}

/** One parked object, under its name's lease; true when it was put back in its replacement's place. */
async function settleParked(ds: DataScope, parked: ParkedRow, succeeded: boolean): Promise<boolean> {
  const old = parkedObjectRow(parked);
  const drop = (table: string) => ds.columns.command(sql`DROP TABLE IF EXISTS ${qualified(ds, table)}`);
  return withNameLease(ds, old.table_name, async () => {
    // Settled meanwhile (the worker and the background loop both try): nothing left to do.
    if (!(await findParkedByTable(ds.db, parked.parked_table))) return false;
    if (succeeded) {
      await deleteParked(ds.db, parked.parked_table);
      await drop(parked.parked_table);
      return false;
    }
    const live = await findObjectByTable(ds.db, old.table_name);
    if (live?.id !== parked.replacement_id) {
      // Replaced again by another attempt that has not ended: the rows it waits with are this
      // failed attempt's, so it waits with the ones before them instead (its failure puts those
      // back). Otherwise the name was replaced for good, or deleted: the old rows are not wanted.
      const waiting = await findParkedObject(ds.db, parked.replacement_id);
      if (waiting) {
        await drop(waiting.parked_table);
        await ds.columns.command(sql`RENAME TABLE ${qualified(ds, parked.parked_table)} TO ${qualified(ds, waiting.parked_table)}`);
        await ds.db.transaction().execute(async (tx) => {
          await replaceParkedObject(tx, waiting.parked_table, parked);
          await deleteParked(tx, parked.parked_table);
        });
        return false;
      }
      await deleteParked(ds.db, parked.parked_table);
      await drop(parked.parked_table);
      return false;
    }
    // The live name holds the old rows again, and the parked table the failed attempt's.
    await swapTables(ds, old.table_name, parked.parked_table);
    try {
      await ds.db.transaction().execute(async (tx) => {
        if (!(await deleteObjectRow(tx, parked.replacement_id, ds.clock.now()))) throw new ReplacementGone();
        await tx.deleteFrom("dropped_objects").where("id", "=", old.id).execute();
        await insertObject(tx, old);
        await deleteParked(tx, parked.parked_table);
      });
    } catch (error) {
      // The registry still names the replacement (or nothing): its rows go back under the live name.
      const back = swapTables(ds, old.table_name, parked.parked_table);
      if (!(error instanceof ReplacementGone)) {
        await back;
        throw error;
      }
      await back.catch(() => undefined);
      // Deleted meanwhile by what drops without the lease (retention's cleanup of a job's objects):
      // the deletion stands, for both versions.
      await deleteParked(ds.db, parked.parked_table);
      await drop(parked.parked_table);
      await drop(old.table_name);
      return false;
    }
    forgetColumns(parked.replacement_id);
    forgetColumns(old.id);
    await drop(parked.parked_table);
    return true;
  });
}

class ReplacementGone extends Error {}
