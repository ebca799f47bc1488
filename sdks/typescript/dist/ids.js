// Ids: runs are globally unique, pauses and calls unique within the process.
import { randomBytes } from 'node:crypto';
const base = randomBytes(3).toString('hex');
let counter = 0;
/** A globally unique id such as `run_1f2e3d4c5b6a`. */
export function newId(prefix) {
    return `${prefix}_${randomBytes(6).toString('hex')}`;
}
/** A compact process-unique id such as `pause_a1b2c3_7`. */
export function nextId(prefix) {
    counter += 1;
    return `${prefix}_${base}_${counter}`;
}
