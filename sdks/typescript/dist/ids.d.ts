/** A globally unique id such as `run_1f2e3d4c5b6a`. */
export declare function newId(prefix: string): string;
/** A compact process-unique id such as `pause_a1b2c3_7`. */
export declare function nextId(prefix: string): string;
