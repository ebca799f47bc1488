/** This package's version (sent as `hello.versions.client` and `run.started.sdk.version`). */
export const VERSION = '0.1.0';
/** The SDK name announced on the wire. */
export const SDK_NAME = 'mindgate';
