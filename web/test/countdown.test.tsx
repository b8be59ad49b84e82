import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { Countdown } from '../src/components/countdown';
import { formatCountdown } from '../src/lib/format';
import { isSettled, leasePollMs } from '../src/lib/lease-poll';

beforeEach(() => vi.useFakeTimers({ now: Date.parse('2030-01-01T00:00:00Z') }));
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

test('formatCountdown: days, then hh:mm:ss; never negative', () => {
  expect(formatCountdown(((2 * 24 + 3) * 3600 + 4 * 60 + 5) * 1000)).toBe('2d 03:04:05');
  expect(formatCountdown(59_999)).toBe('00:00:59');
  expect(formatCountdown(-5000)).toBe('00:00:00');
});

test('the countdown ticks every second and then says what comes after', () => {
  render(<Countdown to="2030-01-01T00:00:03Z" after="ended" />);
  const timer = screen.getByRole('timer');
  expect(timer.textContent).toBe('00:00:03');
  expect(timer.getAttribute('datetime')).toBe('2030-01-01T00:00:03Z');
  act(() => vi.advanceTimersByTime(1000));
  expect(timer.textContent).toBe('00:00:02');
  act(() => vi.advanceTimersByTime(2000));
  expect(timer.textContent).toBe('ended');
});

const lease = (state: string, allocations: string[], start = '2030-01-01T00:00:00Z', end = '2030-01-02T00:00:00Z') =>
  ({ state, start, end, allocations: allocations.map((s) => ({ state: s })) }) as Parameters<typeof leasePollMs>[0];

test('a lease is polled every 2 s while not settled, slowly while running, not at all when over', () => {
  const now = Date.parse('2030-01-01T12:00:00Z');
  expect(leasePollMs(lease('active', ['starting', 'active']), now)).toBe(2000);
  expect(leasePollMs(lease('ending', ['releasing']), now)).toBe(2000);
  expect(leasePollMs(lease('ended', ['releasing']), now)).toBe(2000);
  expect(leasePollMs(lease('active', ['active']), now)).toBe(30_000);
  expect(leasePollMs(lease('active', ['active'], undefined, '2030-01-01T12:00:30Z'), now)).toBe(2000);
  expect(leasePollMs(lease('pending', ['reserved'], '2030-01-01T12:00:10Z'), now)).toBe(2000);
  expect(leasePollMs(lease('ended', ['released', 'quarantined']), now)).toBeNull();
  expect(isSettled(lease('ended', ['released']), now)).toBe(true);
  expect(isSettled(lease('active', ['starting']), now)).toBe(false);
});
