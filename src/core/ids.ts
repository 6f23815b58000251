// Snowflake ids (CONTRACT §2): 41-bit ms since 2020-01-01Z, 10-bit node, 12-bit sequence.

import type { Clock } from "./clock.js";

export const SNOWFLAKE_EPOCH_MS = Date.UTC(2020, 0, 1);

/** The largest id a BIGINT holds: 19 digits can still pass it (9223372036854775808), which no store can bind. */
export const MAX_ID = (1n << 63n) - 1n;

/** An id written as the service writes one: decimal digits, no leading zero, from 1, within MAX_ID. */
export const isCanonicalId = (text: string): boolean => /^[1-9]\d{0,18}$/.test(text) && BigInt(text) <= MAX_ID;
const NODE_BITS = 10n;
const SEQUENCE_BITS = 12n;
export const MAX_NODE = (1 << Number(NODE_BITS)) - 1;
const MAX_SEQUENCE = (1n << SEQUENCE_BITS) - 1n;

export interface IdGenerator {
  next(): bigint;
}

/**
 * The generator's state lives in shared memory (the last millisecond and sequence, packed in one
 * 64-bit word updated by compare-and-swap), so the task threads of a process mint ids under the
 * process's node lease without ever handing out one twice. Pass `sharedState()` to a thread and
 * build its generator with `attachIdGenerator`.
 */
export interface SharedIdGenerator extends IdGenerator {
  readonly shared: SharedIdState;
}

export interface SharedIdState {
  node: number;
  buffer: SharedArrayBuffer;
}

export function createIdGenerator(node: number, clock: Clock): SharedIdGenerator {
  if (!Number.isInteger(node) || node < 0 || node > MAX_NODE) {
    throw new RangeError(`snowflake node must be an integer in 0..${MAX_NODE}, got ${node}`);
  }
  const buffer = new SharedArrayBuffer(8);
  // Nothing minted yet: the packed state of millisecond -1.
  new BigInt64Array(buffer)[0] = -1n << SEQUENCE_BITS;
  return attachIdGenerator({ node, buffer }, clock);
}

/** A generator over shared state made by `createIdGenerator` (in this thread or another). */
export function attachIdGenerator(shared: SharedIdState, clock: Clock): SharedIdGenerator {
  const state = new BigInt64Array(shared.buffer);
  const nodePart = BigInt(shared.node) << SEQUENCE_BITS;
  return {
    shared,
    next(): bigint {
      for (;;) {
        const last = Atomics.load(state, 0);
        const lastMs = Number(last >> SEQUENCE_BITS);
        // Never go backwards: a clock step back reuses the last millisecond's sequence space.
        let ms = Math.max(clock.now(), lastMs);
        let sequence = 0n;
        if (ms === lastMs) {
          sequence = ((last & MAX_SEQUENCE) + 1n) & MAX_SEQUENCE;
          // Sequence exhausted within one millisecond: borrow the next millisecond.
          if (sequence === 0n) ms = lastMs + 1;
        }
        const packed = (BigInt(ms) << SEQUENCE_BITS) | sequence;
        if (Atomics.compareExchange(state, 0, last, packed) !== last) continue; // another thread won: retry
        return (BigInt(ms - SNOWFLAKE_EPOCH_MS) << (NODE_BITS + SEQUENCE_BITS)) | nodePart | sequence;
      }
    },
  };
}

/** The creation time encoded in an id. */
export const idTimestampMs = (id: bigint): number =>
  Number(id >> (NODE_BITS + SEQUENCE_BITS)) + SNOWFLAKE_EPOCH_MS;
