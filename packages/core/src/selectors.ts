/**
 * Device selectors in the SYCL/oneDPL manner: a selector scores each device's info; the highest
 * non-negative score wins, and a negative score rejects the device.
 */
import {
  ASPECTS,
  type Aspect,
  type Device,
  type DeviceCandidate,
  type DeviceInfo,
  enumerateDevices,
  type OpenOptions,
  openDevice,
} from './device';
import { ArgumentError, DeviceNotFoundError, describe } from './errors';

/** Scores a device: higher is better, negative rejects it. */
export type Selector = (info: DeviceInfo) => number;

function kindScore(info: DeviceInfo): number {
  switch (info.kind) {
    case 'gpu':
      return 1000;
    case 'software-gpu':
      return 500;
    case 'cpu':
      return 100;
  }
}

/** The best device: a hardware GPU, else a software GPU, else the CPU. */
export const defaultSelector: Selector = (info) => kindScore(info);

/** Any GPU (hardware preferred over software); rejects the CPU. */
export const gpuSelector: Selector = (info) => (info.kind === 'cpu' ? -1 : kindScore(info));

/** The host CPU; rejects GPUs. */
export const cpuSelector: Selector = (info) => (info.kind === 'cpu' ? 1 : -1);

/** True when `info` has `aspect`. */
export function hasAspect(info: DeviceInfo, aspect: Aspect): boolean {
  switch (aspect) {
    case 'gpu':
      return info.kind !== 'cpu';
    case 'cpu':
      return info.kind === 'cpu';
    case 'software':
      return info.kind === 'software-gpu';
    case 'hardware':
      return info.kind === 'gpu';
    default:
      return info.features.has(aspect);
  }
}

function checkAspects(list: unknown, argument: string): Aspect[] {
  if (!Array.isArray(list)) throw new ArgumentError(argument, 'an array of aspects', describe(list));
  for (const a of list) {
    if (!(ASPECTS as readonly unknown[]).includes(a)) {
      throw new ArgumentError(argument, `aspects among ${ASPECTS.join(', ')}`, describe(a));
    }
  }
  return list as Aspect[];
}

/**
 * Selects devices with every `required` aspect and none of the `denied` ones; among those the
 * default order applies (hardware GPU, software GPU, CPU).
 */
export function aspectSelector(required: readonly Aspect[], denied: readonly Aspect[] = []): Selector {
  const req = checkAspects(required, 'required');
  const den = checkAspects(denied, 'denied');
  return (info) => {
    for (const a of req) if (!hasAspect(info, a)) return -1;
    for (const a of den) if (hasAspect(info, a)) return -1;
    return kindScore(info);
  };
}

function summary(info: DeviceInfo): string {
  const f = [...info.features].filter((x) => (ASPECTS as readonly string[]).includes(x));
  return `${info.name} [${info.kind}${f.length ? `; ${f.join(', ')}` : ''}]`;
}

/** Picks the best candidate for `selector` without opening it. */
export async function selectCandidate(selector: Selector): Promise<DeviceCandidate> {
  if (typeof selector !== 'function') {
    throw new ArgumentError('selector', 'a function (info) => number', describe(selector));
  }
  const all = await enumerateDevices();
  let best: DeviceCandidate | undefined;
  let bestScore = -1;
  for (const c of all) {
    const s = selector(c.info);
    if (typeof s !== 'number' || Number.isNaN(s)) {
      throw new ArgumentError('selector', 'to return a number (negative rejects a device)', describe(s));
    }
    if (s >= 0 && s > bestScore) {
      best = c;
      bestScore = s;
    }
  }
  if (!best) {
    throw new DeviceNotFoundError(
      `no device matches the selector; found: ${all.map((c) => summary(c.info)).join('; ') || 'nothing'}`,
    );
  }
  return best;
}

/** Opens the best device for `selector`. Throws DeviceNotFoundError listing what was found if none qualifies. */
export async function selectDevice(selector: Selector = defaultSelector, options?: OpenOptions): Promise<Device> {
  return openDevice(await selectCandidate(selector), options);
}
