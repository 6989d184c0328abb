/**
 * The progress bar, on stderr so stdout keeps only the report. cli-progress is the widely used,
 * dependency-light choice (ETA, custom payload, TTY detection); when stderr is not a terminal it
 * prints a plain status line every 15 s instead of redrawing, so CI and remote logs stay readable.
 */
import { Presets, SingleBar } from 'cli-progress';

/** A progress bar over a known number of steps. */
export interface Progress {
  /** Shows what runs now. */
  step(task: string): void;
  /** One step finished. */
  done(): void;
  stop(): void;
}

/** A bar over `total` steps; `enabled: false` gives a silent one. */
export function createProgress(total: number, enabled = true): Progress {
  if (!enabled || total === 0) return { step() {}, done() {}, stop() {} };
  const bar = new SingleBar(
    {
      format: 'bench {bar} {percentage}% | {value}/{total} | ETA {eta_formatted} | {task}',
      hideCursor: true,
      clearOnComplete: true,
      etaBuffer: 40,
      noTTYOutput: true,
      notTTYSchedule: 15_000,
      stream: process.stderr,
    },
    Presets.shades_classic,
  );
  bar.start(total, 0, { task: 'starting' });
  let value = 0;
  return {
    step: (task) => bar.update(value, { task }),
    done: () => bar.update(++value),
    stop: () => bar.stop(),
  };
}
