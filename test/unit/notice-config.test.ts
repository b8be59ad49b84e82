import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const H = 3_600_000;

describe('LEASEHOLD_NOTICE_OFFSETS', () => {
  it('defaults to a day and an hour before the end', () => {
    expect(loadConfig({ HOME: '/home/ada' }).noticeOffsetsMs).toEqual([24 * H, H]);
  });

  it('takes a list of durations, largest first, or none', () => {
    expect(loadConfig({ LEASEHOLD_NOTICE_OFFSETS: '30m, P2D,1h' }).noticeOffsetsMs).toEqual([48 * H, H, H / 2]);
    expect(loadConfig({ LEASEHOLD_NOTICE_OFFSETS: 'none' }).noticeOffsetsMs).toEqual([]);
  });

  it('still reads the former single LEASEHOLD_WEBHOOK_ENDING_SOON when the list is unset, and the list wins over it', () => {
    expect(loadConfig({ LEASEHOLD_WEBHOOK_ENDING_SOON: '2h' }).noticeOffsetsMs).toEqual([2 * H]);
    expect(loadConfig({ LEASEHOLD_WEBHOOK_ENDING_SOON: '2h', LEASEHOLD_NOTICE_OFFSETS: '3h' }).noticeOffsetsMs).toEqual([3 * H]);
  });

  it('names the variable when an offset is wrong', () => {
    expect(() => loadConfig({ LEASEHOLD_NOTICE_OFFSETS: '1h,soon' })).toThrow(/LEASEHOLD_NOTICE_OFFSETS/);
    expect(() => loadConfig({ LEASEHOLD_NOTICE_OFFSETS: '0s' })).toThrow(/LEASEHOLD_NOTICE_OFFSETS.*longer than zero/);
  });
});
