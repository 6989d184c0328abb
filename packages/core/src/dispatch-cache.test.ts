import { describe, expect, it } from 'vitest';
import { LruCache } from './dispatch-cache';

describe('LruCache (the engines’ per-device plan caches)', () => {
  it('evicts the least recently used entry: a get makes an entry the most recent', () => {
    const disposed: string[] = [];
    const c = new LruCache<string>(3, (v) => disposed.push(v));
    c.set('a', 'A');
    c.set('b', 'B');
    c.set('c', 'C');
    expect(c.get('a')).toBe('A');
    c.set('d', 'D'); // b is the oldest now
    expect(disposed).toEqual(['B']);
    expect(c.get('b')).toBeUndefined();
    expect(c.get('c')).toBe('C');
    c.set('e', 'E'); // a (used before c) goes
    expect(disposed).toEqual(['B', 'A']);
    expect([c.get('c'), c.get('d'), c.get('e')]).toEqual(['C', 'D', 'E']);
    expect(c.size).toBe(3);
  });

  it('a set of a present key replaces (disposing the old value) and makes it the most recent', () => {
    const disposed: string[] = [];
    const c = new LruCache<string>(2, (v) => disposed.push(v));
    c.set('a', 'A');
    c.set('b', 'B');
    c.set('a', 'A2');
    expect(disposed).toEqual(['A']);
    c.set('c', 'C'); // b is the oldest
    expect(disposed).toEqual(['A', 'B']);
    expect(c.get('a')).toBe('A2');
    // The same value set again is not disposed.
    c.set('a', 'A2');
    expect(disposed).toEqual(['A', 'B']);
  });

  it('keeps the total weight under maxWeight, but always the entry just set', () => {
    const disposed: number[] = [];
    const c = new LruCache<number>(
      10,
      (v) => disposed.push(v),
      (v) => v,
      10,
    );
    c.set('four', 4);
    c.set('five', 5);
    c.get('four');
    c.set('three', 3); // 12 > 10: five (least recently used) goes
    expect(disposed).toEqual([5]);
    expect(c.totalWeight).toBe(7);
    c.set('big', 50); // everything else goes; big stays
    expect(disposed).toEqual([5, 4, 3]);
    expect(c.size).toBe(1);
    expect(c.get('big')).toBe(50);
    c.clear();
    expect(disposed).toEqual([5, 4, 3, 50]);
    expect(c.size).toBe(0);
    expect(c.totalWeight).toBe(0);
  });
});
