// The publish/subscribe the store and views talk through.

/** Minimal publish/subscribe. */
export class Emitter {
  constructor() { this.handlers = new Map(); }
  on(topic, fn) {
    if (!this.handlers.has(topic)) this.handlers.set(topic, new Set());
    this.handlers.get(topic).add(fn);
    return () => this.handlers.get(topic).delete(fn);
  }
  emit(topic, arg) {
    const set = this.handlers.get(topic);
    if (!set) return;
    for (const fn of set) {
      try { fn(arg); } catch (err) { console.warn('mindgate: handler for', topic, 'failed:', err); }
    }
  }
}
