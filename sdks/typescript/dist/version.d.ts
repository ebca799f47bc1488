/** This package's version (sent as `hello.versions.client` and `run.started.sdk.version`). */
export declare const VERSION = "0.1.0";
/** The SDK name announced on the wire. */
export declare const SDK_NAME = "mindgate";
