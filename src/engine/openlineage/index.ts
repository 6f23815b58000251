// OpenLineage RunEvents out (docs/OPENLINEAGE.md): the configured sinks and the emitter feeding them.

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Clock } from "../../core/clock.js";
import type { ColumnTarget, OpenLineageTarget } from "../../core/config.js";
import type { Logger } from "../../core/log.js";
import type { ColumnStore } from "../../data/client.js";
import type { Store } from "../../store/db.js";
import { type OpenLineageEmitter, startEmitter } from "./emitter.js";
import { facetsOf } from "./facets.js";
import { createLossLog } from "./loss-log.js";
import { columnStoreNamespace } from "./names.js";
import { type Sink, fileTransport, httpTransport, startSink } from "./sinks.js";

export type { OpenLineageEmitter } from "./emitter.js";

export interface OpenLineageDeps {
  db: Store;
  columns: () => Promise<ColumnStore>;
  columnTarget: ColumnTarget;
  clock: Clock;
  log: Logger;
  /** A URI naming jobhouse and its version (every event's and facet's producer). */
  producer: string;
}

/** The app shows it every change its process publishes (`observe`) and closes it before the stores. */
export function startOpenLineage(target: OpenLineageTarget, deps: OpenLineageDeps): OpenLineageEmitter {
  const losses = createLossLog(deps.log);
  const onLoss = losses.add.bind(losses);
  const sinks: Sink[] = [];
  if (target.url !== null) sinks.push(startSink(httpTransport(target.url, target.token), { onLoss }));
  if (target.file !== null) {
    // A missing folder would fail every append; one that cannot be made fails them with its reason.
    try {
      mkdirSync(dirname(target.file), { recursive: true });
    } catch (error) {
      deps.log.warn(`openlineage: cannot make the folder of ${target.file}: ${(error as Error).message}`);
    }
    sinks.push(startSink(fileTransport(target.file), { onLoss }));
  }
  return startEmitter({
    db: deps.db,
    columns: deps.columns,
    clock: deps.clock,
    log: deps.log,
    namespace: target.namespace,
    producer: deps.producer,
    facets: facetsOf(deps.producer),
    tables: { namespace: columnStoreNamespace(deps.columnTarget), database: deps.columnTarget.database },
    sinks,
    losses,
  });
}
