/**
 * The Dawn calls a piece of code makes (tests and probes of the per-call hot path, issue 12).
 */
import type { GpuDevice } from '../device';

/**
 * The Dawn calls `f` makes: every method called and every accessor read (`name(get)`: a native
 * getter, as `GPUBuffer.size` or a limit of `GPUSupportedLimits`) on the prototypes of the device,
 * its queue and limits, a command encoder, a compute pass and a buffer while it runs, in order
 * (`queue.submit`, `pass.setBindGroup`, ...). Counts what a call costs in native calls, against the
 * floor's.
 */
export async function dawnCallsOf(device: GpuDevice, f: () => Promise<unknown>): Promise<string[]> {
  const g = device.gpu;
  const enc = g.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.end();
  enc.finish();
  const buf = g.createBuffer({ size: 16, usage: GPUBufferUsage.COPY_DST });
  buf.destroy();
  const log: string[] = [];
  const restore: (() => void)[] = [];
  const objects: [string, object][] = [
    ['device', g],
    ['queue', g.queue],
    ['limits', g.limits],
    ['encoder', enc],
    ['pass', pass],
    ['buffer', buf],
  ];
  const wrapped = new Set<object>();
  for (const [kind, o] of objects) {
    for (
      let proto = Object.getPrototypeOf(o);
      proto && proto !== Object.prototype;
      proto = Object.getPrototypeOf(proto)
    ) {
      if (wrapped.has(proto)) continue;
      wrapped.add(proto);
      for (const name of Object.getOwnPropertyNames(proto)) {
        const d = Object.getOwnPropertyDescriptor(proto, name);
        if (!d || name === 'constructor') continue;
        let replacement: PropertyDescriptor | undefined;
        if (typeof d.value === 'function') {
          const original = d.value as (...args: unknown[]) => unknown;
          replacement = {
            ...d,
            value: function (this: unknown, ...args: unknown[]) {
              log.push(`${kind}.${name}`);
              return original.apply(this, args);
            },
          };
        } else if (d.get) {
          const get = d.get;
          replacement = {
            ...d,
            get: function (this: unknown) {
              log.push(`${kind}.${name}(get)`);
              return get.call(this);
            },
          };
        }
        if (!replacement) continue;
        Object.defineProperty(proto, name, replacement);
        restore.push(() => Object.defineProperty(proto, name, d));
      }
    }
  }
  try {
    await f();
  } finally {
    for (const r of restore) r();
  }
  return log;
}
