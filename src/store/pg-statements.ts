// Named, described-once statements on PostgreSQL: how the store's pool sends Kysely's queries.

import { createRequire } from "node:module";
import pg from "pg";

/** How pg turns a bound value into its text (a Date, a Buffer, an array, an object as JSON). */
const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils.js") as { prepareValue: (value: unknown) => unknown };

/** Statement texts prepared by name, shared by every connection (a text keeps its name). */
const preparedNames = new Map<string, string>();
const MAX_PREPARED = 500;
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * Kysely sends every statement unnamed, so PostgreSQL parses and plans it on each execution: for
 * the engine's small statements planning costs more than running (0.3–0.5 ms against 0.1 ms).
 * Named statements are parsed once per connection and their plans cached. Texts beyond the first
 * MAX_PREPARED (IN lists of every length) stay unnamed, so a connection's cache stays bounded.
 */
export function usePreparedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, values?: unknown) => {
    if (typeof text !== "string" || !Array.isArray(values) || !PREPARABLE.test(text)) return query(text, values);
    let name = preparedNames.get(text);
    if (name === undefined && preparedNames.size < MAX_PREPARED) {
      name = `jobhouse_${preparedNames.size}`;
      preparedNames.set(text, name);
    }
    if (name === undefined) return query(text, values);
    const statement = { name, text, values };
    return new Promise((resolve, reject) => {
      query(new DescribedOnceQuery(statement, (error: Error | undefined, result: unknown) => (error ? reject(error) : resolve(result))));
    }).catch((error: Error) => {
      // As pg's own promise does: the stack leads back to the caller, not to the socket's handler.
      Error.captureStackTrace(error);
      throw error;
    });
  }) as typeof client.query;
}

/** What a query uses of pg's connection (its protocol writer) beyond the public types. */
interface ProtocolWriter {
  parsedStatements: Record<string, string>;
  bind(message: { portal: string; statement: string; values: unknown[]; binary: boolean; valueMapper: (value: unknown) => unknown }): void;
  execute(message: { portal: string }): void;
  sync(): void;
  close(message: { type: "S"; name: string }): void;
}

type Fields = pg.FieldDef[];

/** pg.Query's members that DescribedOnceQuery takes part in (pg/lib/query.js). */
interface QueryInternals {
  name: string;
  text: string;
  values: unknown[];
  binary: boolean;
  portal: string;
  prepare(connection: ProtocolWriter): void;
  handleRowDescription(message: { fields: Fields }): void;
  handleReadyForQuery(connection: ProtocolWriter): void;
  handleError(error: Error, connection: ProtocolWriter): void;
}

const BaseQuery = pg.Query as unknown as new (config: object, callback: (error: Error | undefined, result: unknown) => void) => QueryInternals;

/** Per connection: each named statement's row description, null for one that returns no rows. */
const descriptions = new WeakMap<ProtocolWriter, Map<string, Fields | null>>();

/**
 * pg asks PostgreSQL to describe a prepared statement's rows at every execution, and parses the
 * answer each time (a field per column: name, table, type): a few percent of a worker's main thread
 * for the claim's thirty columns. A statement's rows keep their shape for as long as it stays
 * prepared (PostgreSQL refuses to execute it once a schema change alters its result), so the first
 * execution on a connection learns the description and later ones bind and execute without asking.
 */
class DescribedOnceQuery extends BaseQuery {
  /** The fields seen by an execution that asked for them. */
  private learned: Fields | null = null;
  private learning = false;
  /** Inside pg's own prepare, where only binding a value can fail. */
  private binding = false;
  /** A value could not be bound, so pg closed the statement. */
  private unbound = false;

  override prepare(connection: ProtocolWriter): void {
    const known = descriptions.get(connection)?.get(this.name);
    if (known === undefined || connection.parsedStatements[this.name] === undefined) {
      this.learning = true;
      this.binding = true;
      super.prepare(connection);
      this.binding = false;
      return;
    }
    try {
      connection.bind({ portal: this.portal, statement: this.name, values: this.values, binary: this.binary, valueMapper: prepareValue });
    } catch (error) {
      // Nothing was sent: the exchange ends before anything runs, the statement stays prepared.
      connection.sync();
      this.handleError(error as Error, connection);
      return;
    }
    if (known) super.handleRowDescription({ fields: known });
    connection.execute({ portal: this.portal });
    connection.sync();
  }

  /**
   * pg closes the statement when a value cannot be bound in its first execution (super.prepare)
   * but still counts it as parsed, so every later execution on that connection failed with "prepared
   * statement does not exist": the exchange's end forgets it, and the next execution parses anew.
   */
  override handleError(error: Error, connection: ProtocolWriter): void {
    if (this.binding) this.unbound = true;
    super.handleError(error, connection);
  }

  override handleRowDescription(message: { fields: Fields }): void {
    this.learned = message.fields;
    super.handleRowDescription(message);
  }

  /** Reached by a successful exchange, or after a value could not be bound. */
  override handleReadyForQuery(connection: ProtocolWriter): void {
    if (this.unbound) {
      delete connection.parsedStatements[this.name];
      descriptions.get(connection)?.delete(this.name);
    } else if (this.learning) {
      let known = descriptions.get(connection);
      if (!known) descriptions.set(connection, (known = new Map()));
      known.set(this.name, this.learned);
    }
    super.handleReadyForQuery(connection);
  }
}
